package io.affinityrouter.core.kvevents;

import java.util.concurrent.atomic.LongAdder;

/** The counters behind {@link KvEventStats}, shared by a subscriber's threads. Thread-safe. */
final class KvEventCounters {
  final LongAdder batches = new LongAdder();
  final LongAdder events = new LongAdder();
  final LongAdder decodeErrors = new LongAdder();
  final LongAdder gaps = new LongAdder();
  final LongAdder replays = new LongAdder();
  final LongAdder replayFailures = new LongAdder();
  final LongAdder duplicates = new LongAdder();
  final LongAdder restarts = new LongAdder();
  final LongAdder outOfSequence = new LongAdder();
  final LongAdder reconnects = new LongAdder();
  private final LongAdder[] skipped = new LongAdder[KvEventSkip.values().length];

  KvEventCounters() {
    for (int i = 0; i < skipped.length; i++) {
      skipped[i] = new LongAdder();
    }
  }

  void skip(KvEventSkip reason) {
    skipped[reason.ordinal()].increment();
  }

  KvEventStats snapshot() {
    long[] skips = new long[skipped.length];
    for (int i = 0; i < skips.length; i++) {
      skips[i] = skipped[i].sum();
    }
    return new KvEventStats(batches.sum(), events.sum(), decodeErrors.sum(), skips, gaps.sum(),
        replays.sum(), replayFailures.sum(), duplicates.sum(), restarts.sum(), reconnects.sum(),
        outOfSequence.sum());
  }
}
