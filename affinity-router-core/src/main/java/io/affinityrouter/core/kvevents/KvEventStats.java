package io.affinityrouter.core.kvevents;

import java.util.Arrays;

/**
 * A snapshot of a {@link KvEventSubscriber}'s (or a {@link KvEventDecoder}'s) counters since it was
 * created. Immutable and thread-safe; counters are read one by one, so a snapshot taken while events
 * arrive may be off by the events of one batch between counters.
 */
public final class KvEventStats {
  private static final KvEventSkip[] SKIPS = KvEventSkip.values();

  private final long batches;
  private final long events;
  private final long decodeErrors;
  private final long[] skipped;
  private final long gaps;
  private final long replays;
  private final long replayFailures;
  private final long duplicates;
  private final long restarts;
  private final long reconnects;
  private final long outOfSequence;

  KvEventStats(long batches, long events, long decodeErrors, long[] skipped, long gaps,
      long replays, long replayFailures, long duplicates, long restarts, long reconnects,
      long outOfSequence) {
    this.batches = batches;
    this.events = events;
    this.decodeErrors = decodeErrors;
    this.skipped = skipped.clone();
    this.gaps = gaps;
    this.replays = replays;
    this.replayFailures = replayFailures;
    this.duplicates = duplicates;
    this.restarts = restarts;
    this.reconnects = reconnects;
    this.outOfSequence = outOfSequence;
  }

  /** Batches (messages) decoded, live or replayed. */
  public long batches() {
    return batches;
  }

  /** Events decoded from those batches, applied or skipped. */
  public long events() {
    return events;
  }

  /** Payloads or messages that could not be decoded (truncated, garbage, wrong frames); skipped. */
  public long decodeErrors() {
    return decodeErrors;
  }

  /** Events skipped for {@code reason}. */
  public long skipped(KvEventSkip reason) {
    return skipped[reason.ordinal()];
  }

  /** Events skipped for any reason. */
  public long skippedTotal() {
    return Arrays.stream(skipped).sum();
  }

  /** Sequence gaps seen on the live stream (a sequence number past the expected one). */
  public long gaps() {
    return gaps;
  }

  /** Replays requested from the publisher's replay socket to close a gap. */
  public long replays() {
    return replays;
  }

  /**
   * Gaps that could not be closed (no replay endpoint, no answer in time, or the publisher no
   * longer had the missing batches); each one dropped the replica's exact index.
   */
  public long replayFailures() {
    return replayFailures;
  }

  /** Batches received twice (live after they were replayed) and dropped. */
  public long duplicates() {
    return duplicates;
  }

  /**
   * Publisher restarts seen (sequence numbers starting over); each one dropped the replica's exact
   * index, as a restarted engine's cache is empty.
   */
  public long restarts() {
    return restarts;
  }

  /** Connections re-established after the first one, and sockets rebuilt after an error. */
  public long reconnects() {
    return reconnects;
  }

  /**
   * Messages dropped for their sequence number: it broke the sequence and the next message went on
   * from where the stream was (a garbage number), so the message was not applied.
   */
  public long outOfSequence() {
    return outOfSequence;
  }

  @Override
  public String toString() {
    StringBuilder s = new StringBuilder("KvEventStats{batches=").append(batches)
        .append(", events=").append(events).append(", decodeErrors=").append(decodeErrors)
        .append(", gaps=").append(gaps).append(", replays=").append(replays)
        .append(", replayFailures=").append(replayFailures).append(", duplicates=")
        .append(duplicates).append(", restarts=").append(restarts).append(", reconnects=")
        .append(reconnects).append(", outOfSequence=").append(outOfSequence);
    for (KvEventSkip reason : SKIPS) {
      if (skipped[reason.ordinal()] != 0) {
        s.append(", skipped.").append(reason).append('=').append(skipped[reason.ordinal()]);
      }
    }
    return s.append('}').toString();
  }
}
