package io.affinityrouter.core;

import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.internal.Checks;

/**
 * Turns a replica's load, in tokens, into an estimated time to first token for one request there, in
 * seconds:
 *
 * <pre>
 *   slowdown       = 1 + running / batchSlowdownSequences
 *   prefillSeconds = (U / prefillTokensPerSecond + attention × U × (C + U / 2)) × slowdown
 *                                                       (prefix locality: U uncached, C cached tokens)
 *   queueSeconds   = prefillAhead × slowdown + running × runningSequenceSeconds + kvWaitSeconds
 *                                                                                         (load)
 * </pre>
 *
 * The attention term is the quadratic part of prefill: each uncached token attends to every token
 * before it, so recomputing a long context costs more than its length alone says, and a long
 * session's cache is worth more than a short prompt's.
 *
 * <ul>
 *   <li>{@code prefillAhead} is the prefill work queued before the request, in seconds: the larger
 *       of this router's own queue there ({@link ReplicaState#pendingPrefillSeconds}: each routed
 *       request's estimated prefill, drained as time passes and as first tokens arrive; fresh and
 *       exact about what this router sent) plus, with a {@link io.affinityrouter.spi.LoadExchange},
 *       what the other gateways published of theirs ({@link ReplicaState#peerPendingSeconds}), and
 *       the engine's queue in tokens (its waiting requests times the average uncached prompt; stale
 *       by the scrape interval, but it counts other gateways' work) over the prefill rate;
 *   <li>{@code running} is the larger of this router's in-flight requests and the engine's running
 *       requests; each running sequence adds {@code runningSequenceSeconds}: the decode batch's
 *       contention, and the sessions it stands for, whose next turns will come back there;
 *   <li>{@code kvWaitSeconds} is non-zero when the tokens the replica lacks (prompt + expected
 *       output, less what it holds cached: the caller passes them) do not fit in the KV its
 *       requests leave free (the larger of {@link ReplicaState#heldTokens} and the engine's
 *       usage): the deficit divided by the rate at which finishing requests free
 *       KV, derived from the output-token throughput (the snapshot's, else the learned per-sequence
 *       decode rate times the running sequences).
 * </ul>
 *
 * A replica holding the prompt's prefix wins until its queue costs more than recomputing the prefix
 * elsewhere: both sides are seconds of the same engine. The figures are the engine's calibration,
 * an {@link EngineProfile}. Immutable and thread-safe.
 */
final class CostModel {
  private final double prefillTokensPerSecond;
  private final double batchSlowdownSequences;
  private final double attentionSeconds;
  private final double runningSequenceSeconds;

  /** Creates a model from the engine's calibration. */
  CostModel(EngineProfile profile) {
    this(profile.prefillTokensPerSecond(), profile.batchSlowdownSequences(),
        profile.attentionSeconds(), profile.runningSequenceSeconds());
  }

  /**
   * Creates a model with the default profile's running-sequence cost.
   *
   * @throws IllegalArgumentException if a figure is not positive and finite (the attention cost may
   *     be zero)
   */
  CostModel(double prefillTokensPerSecond, double batchSlowdownSequences,
      double attentionSeconds) {
    this(prefillTokensPerSecond, batchSlowdownSequences, attentionSeconds,
        EngineProfile.QWEN2_5_7B_H100.runningSequenceSeconds());
  }

  /**
   * Creates a model.
   *
   * @throws IllegalArgumentException if a figure is not positive and finite (the attention cost and
   *     the running-sequence cost may be zero)
   */
  CostModel(double prefillTokensPerSecond, double batchSlowdownSequences,
      double attentionSeconds, double runningSequenceSeconds) {
    this.prefillTokensPerSecond = Checks.positiveFinite(prefillTokensPerSecond, "prefillTokensPerSecond");
    this.batchSlowdownSequences = Checks.positiveFinite(batchSlowdownSequences, "batchSlowdownSequences");
    this.attentionSeconds = Checks.nonNegativeFinite(attentionSeconds, "attentionSeconds");
    this.runningSequenceSeconds = Checks.nonNegativeFinite(runningSequenceSeconds, "runningSequenceSeconds");
  }

  /** Running sequences on the replica, as the larger of the local and the engine's view. */
  static int running(ReplicaLoad load, ReplicaState state) {
    return Math.max(state.inFlightRequests(), load.runningRequests());
  }

  /** The queue seconds that {@code running} sequences stand for. */
  double runningSeconds(int running) {
    return running * runningSequenceSeconds;
  }

  /** The queue seconds that {@code sessions} bound sessions not running now stand for. */
  double sessionSeconds(double sessions) {
    return sessions * runningSequenceSeconds;
  }

  /** The batch slowdown factor for {@code running} sequences. */
  double slowdown(int running) {
    return 1.0 + running / batchSlowdownSequences;
  }

  /**
   * Seconds to prefill {@code uncachedTokens} that follow {@code cachedTokens} cached ones, on a
   * replica with the given slowdown.
   */
  double prefillSeconds(long uncachedTokens, long cachedTokens, double slowdown) {
    double u = uncachedTokens;
    return (u / prefillTokensPerSecond + attentionSeconds * u * (cachedTokens + u / 2)) * slowdown;
  }

  /**
   * Seconds of committed work ahead of a new request of {@code requestTokens} (prompt + expected
   * output) on the replica.
   */
  double queueSeconds(ReplicaLoad load, ReplicaState state, LoadTracker tracker,
      long requestTokens, int running, double slowdown) {
    return queueSeconds(load, state, tracker, requestTokens, running, slowdown, tracker.nowMillis());
  }

  /**
   * As {@link #queueSeconds(ReplicaLoad, ReplicaState, LoadTracker, long, int, double)} at
   * {@code nowMillis} (one clock read per decision, not per replica).
   */
  double queueSeconds(ReplicaLoad load, ReplicaState state, LoadTracker tracker,
      long requestTokens, int running, double slowdown, long nowMillis) {
    double engineQueue = Math.max(state.pendingPrefillTokens(),
        load.waitingRequests() * tracker.uncachedPromptTokensPerRequest()) / prefillTokensPerSecond;
    double ownAndPeers = state.pendingPrefillSeconds(nowMillis)
        + state.peerPendingSeconds(nowMillis);
    double prefillAhead = Math.max(ownAndPeers, engineQueue);
    double seconds = prefillAhead * slowdown + running * runningSequenceSeconds;
    long capacity = load.kvCapacityTokens();
    if (capacity > 0) {
      double used = state.heldTokens(load);
      if (load.kvUsage().isPresent()) {
        used = Math.max(used, load.kvUsage().getAsDouble() * capacity);
      }
      double deficit = requestTokens - (capacity - used);
      if (deficit > 0) {
        seconds += deficit / kvFreeTokensPerSecond(load, state, tracker, running);
      }
    }
    return seconds;
  }

  /** The rate at which finishing requests free KV capacity on the replica, tokens per second. */
  static double kvFreeTokensPerSecond(ReplicaLoad load, ReplicaState state, LoadTracker tracker,
      int running) {
    double outputRate = load.outputTokensPerSecond() > 0
        ? load.outputTokensPerSecond()
        : state.decodeTokensPerSecondPerSequence() * Math.max(1, running);
    double perRequestOutput = Math.max(1, tracker.outputTokensPerRequest());
    double perRequestTokens = perRequestOutput + tracker.uncachedPromptTokensPerRequest();
    return Math.max(1e-9, outputRate / perRequestOutput * perRequestTokens);
  }
}
