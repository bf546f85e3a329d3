package io.affinityrouter.core.scoring;

import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.core.load.LoadTracker;
import io.affinityrouter.core.load.ReplicaState;

/**
 * Turns a replica's load, in tokens, into an estimated time to first token for one request there, in
 * seconds. Two terms, both scaled by the decode batch's slowdown:
 *
 * <pre>
 *   slowdown       = 1 + running / batchSlowdownSequences
 *   prefillSeconds = (U / prefillTokensPerSecond + attention × U × (C + U / 2)) × slowdown
 *                                                       (prefix locality: U uncached, C cached tokens)
 *   queueSeconds   = prefillAhead / prefillTokensPerSecond × slowdown + kvWaitSeconds   (load)
 * </pre>
 *
 * The attention term is the quadratic part of prefill: each uncached token attends to every token
 * before it, so recomputing a long context costs more than its length alone says, and a long
 * session's cache is worth more than a short prompt's.
 *
 * <ul>
 *   <li>{@code prefillAhead} is the prefill work queued before the request: the larger of this
 *       router's own uncached prompt tokens not yet prefilled there (exact, fresh) and the engine's
 *       waiting requests times the average uncached prompt (stale by the scrape interval, but it counts
 *       other gateways' work);
 *   <li>{@code running} is the larger of this router's in-flight requests and the engine's running
 *       requests;
 *   <li>{@code kvWaitSeconds} is non-zero when the request's tokens (prompt + expected output) do not
 *       fit in the free KV capacity: the deficit divided by the rate at which finishing requests free
 *       KV, derived from the output-token throughput (the snapshot's, else the learned per-sequence
 *       decode rate times the running sequences).
 * </ul>
 *
 * A replica holding the prompt's prefix wins until its queue costs more than recomputing the prefix
 * elsewhere: both sides are seconds of the same engine. Immutable and thread-safe.
 */
public final class CostModel {
  /**
   * Default prefill throughput, tokens per second: {@value} (Qwen2.5-7B on one H100 prefills 8k
   * tokens in about 170 ms, 48k tokens/s; rounded down for mixed batches).
   */
  public static final double DEFAULT_PREFILL_TOKENS_PER_SECOND = 40_000;
  /**
   * Default running sequences that double the prefill time: {@value}. Far stronger than the decode
   * kernels' own cost (c·D + d·K per step in the DESIGN.md fit, a few percent of a prefill chunk):
   * a replica's decode batch also holds its KV, its scheduler slots and its queue. In the fleet
   * simulator ({@code examples/simulator}), runs at 6, 8, 12, 16, 32, 64 and 512 gave the best p99
   * TTFT over its five workloads together at 8 (with top-k 5; 512 was worst), hit rates within a
   * point of each other.
   */
  public static final double DEFAULT_BATCH_SLOWDOWN_SEQUENCES = 8;

  /**
   * Default attention cost, seconds per (uncached token × context token): {@value} (9.2e-4 µs, the
   * {@code e} of the step-time fit for Qwen2.5-7B on H100 in DESIGN.md: a 32k-token prefill spends
   * about half its time there).
   */
  public static final double DEFAULT_ATTENTION_SECONDS = 9.2e-10;

  private final double prefillTokensPerSecond;
  private final double batchSlowdownSequences;
  private final double attentionSeconds;

  /**
   * Creates a model.
   *
   * @throws IllegalArgumentException if a figure is not positive and finite (the attention cost may
   *     be zero)
   */
  public CostModel(double prefillTokensPerSecond, double batchSlowdownSequences,
      double attentionSeconds) {
    this.prefillTokensPerSecond = positive(prefillTokensPerSecond, "prefillTokensPerSecond");
    this.batchSlowdownSequences = positive(batchSlowdownSequences, "batchSlowdownSequences");
    if (!(attentionSeconds >= 0) || Double.isInfinite(attentionSeconds)) {
      throw new IllegalArgumentException(
          "attentionSeconds: " + attentionSeconds + " (expected: >= 0 and finite)");
    }
    this.attentionSeconds = attentionSeconds;
  }

  private static double positive(double v, String name) {
    if (!(v > 0) || Double.isInfinite(v)) {
      throw new IllegalArgumentException(name + ": " + v + " (expected: > 0 and finite)");
    }
    return v;
  }

  /** Running sequences on the replica, as the larger of the local and the engine's view. */
  public static int running(ReplicaLoad load, ReplicaState state) {
    return Math.max(state.inFlightRequests(), load.runningRequests());
  }

  /** The batch slowdown factor for {@code running} sequences. */
  public double slowdown(int running) {
    return 1.0 + running / batchSlowdownSequences;
  }

  /**
   * Seconds to prefill {@code uncachedTokens} that follow {@code cachedTokens} cached ones, on a
   * replica with the given slowdown.
   */
  public double prefillSeconds(long uncachedTokens, long cachedTokens, double slowdown) {
    double u = uncachedTokens;
    return (u / prefillTokensPerSecond + attentionSeconds * u * (cachedTokens + u / 2)) * slowdown;
  }

  /**
   * Seconds of committed work ahead of a new request of {@code requestTokens} (prompt + expected
   * output) on the replica.
   */
  public double queueSeconds(ReplicaLoad load, ReplicaState state, LoadTracker tracker,
      long requestTokens, int running, double slowdown) {
    double prefillAhead = Math.max(state.pendingPrefillTokens(),
        load.waitingRequests() * tracker.uncachedPromptTokensPerRequest());
    double seconds = prefillAhead / prefillTokensPerSecond * slowdown;
    long capacity = load.kvCapacityTokens();
    if (capacity > 0) {
      double used = state.inFlightTokens();
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
