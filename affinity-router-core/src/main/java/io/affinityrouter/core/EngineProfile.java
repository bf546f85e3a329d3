package io.affinityrouter.core;

import io.affinityrouter.internal.Checks;

/**
 * The calibration of the engines behind the router, as its cost model uses it: how fast one replica
 * prefills, how much attention over a long context adds, how much a running decode batch slows a
 * prefill, and what each running sequence adds to the queue. From these the router estimates, in
 * seconds, a request's time to first token on each replica:
 *
 * <pre>
 *   slowdown       = 1 + running / batchSlowdownSequences
 *   prefillSeconds = (U / prefillTokensPerSecond + attentionSeconds × U × (C + U / 2)) × slowdown
 *                                                      (U uncached and C cached prompt tokens)
 *   queueSeconds   = prefillAhead × slowdown + running × runningSequenceSeconds + kvWaitSeconds
 * </pre>
 *
 * A fleet of another model or GPU gets its own profile ({@link #QWEN2_5_7B_H100} with the figures
 * changed, {@code with...}); every replica the router routes is taken to run the same engine.
 * Immutable; the constructor checks every figure and throws {@link IllegalArgumentException} with a
 * message such as {@code "prefillTokensPerSecond: -1.0 (expected: > 0 and finite)"}.
 *
 * @param prefillTokensPerSecond the prefill throughput of one replica, tokens per second (positive
 *     and finite)
 * @param attentionSeconds the quadratic attention cost of prefill, seconds per uncached token per
 *     context token (non-negative and finite; zero makes prefill linear)
 * @param batchSlowdownSequences the running sequences that double a prefill's time (positive and
 *     finite)
 * @param runningSequenceSeconds the queue cost of each running sequence on a replica, seconds
 *     (non-negative and finite; zero leaves the decode batch to the slowdown alone)
 */
public record EngineProfile(double prefillTokensPerSecond, double attentionSeconds,
    double batchSlowdownSequences, double runningSequenceSeconds) {

  /**
   * Qwen2.5-7B-Instruct in BF16 on one H100-80GB under vLLM V1, the router's default:
   *
   * <ul>
   *   <li>{@code prefillTokensPerSecond} 48,000: 20.8 µs per token, Microsoft Vidur's H100 profile
   *       for a 7B model;
   *   <li>{@code attentionSeconds} 9.2e-10: the attention term of a step-time fit to
   *       inference-sim's per-layer kernel profiles of this model on this GPU; a 32k-token prefill
   *       spends about 40% of its time there;
   *   <li>{@code batchSlowdownSequences} 64: a decode batch also holds KV and scheduler slots, so
   *       it slows prefill more than its kernels' cost alone says;
   *   <li>{@code runningSequenceSeconds} 0.02: a running sequence is a session whose next turns
   *       come back to its replica, not one decode step (about 4 ms for 64 sequences of 3k-token
   *       contexts): counted at that, new sessions pile onto a prompt family's replica until their
   *       growing contexts must be moved off it.
   * </ul>
   */
  public static final EngineProfile QWEN2_5_7B_H100 = new EngineProfile(48_000, 9.2e-10, 64, 0.02);

  /**
   * Checks the figures.
   *
   * @throws IllegalArgumentException if {@code prefillTokensPerSecond} or
   *     {@code batchSlowdownSequences} is not positive and finite, or {@code attentionSeconds} or
   *     {@code runningSequenceSeconds} is negative or not finite
   */
  public EngineProfile {
    Checks.positiveFinite(prefillTokensPerSecond, "prefillTokensPerSecond");
    Checks.nonNegativeFinite(attentionSeconds, "attentionSeconds");
    Checks.positiveFinite(batchSlowdownSequences, "batchSlowdownSequences");
    Checks.nonNegativeFinite(runningSequenceSeconds, "runningSequenceSeconds");
  }

  /**
   * Returns this profile with another prefill throughput.
   *
   * @throws IllegalArgumentException if {@code tokensPerSecond} is not positive and finite
   */
  public EngineProfile withPrefillTokensPerSecond(double tokensPerSecond) {
    return new EngineProfile(tokensPerSecond, attentionSeconds, batchSlowdownSequences,
        runningSequenceSeconds);
  }

  /**
   * Returns this profile with another attention cost.
   *
   * @throws IllegalArgumentException if {@code seconds} is negative or not finite
   */
  public EngineProfile withAttentionSeconds(double seconds) {
    return new EngineProfile(prefillTokensPerSecond, seconds, batchSlowdownSequences,
        runningSequenceSeconds);
  }

  /**
   * Returns this profile with another count of running sequences that double a prefill's time.
   *
   * @throws IllegalArgumentException if {@code sequences} is not positive and finite
   */
  public EngineProfile withBatchSlowdownSequences(double sequences) {
    return new EngineProfile(prefillTokensPerSecond, attentionSeconds, sequences,
        runningSequenceSeconds);
  }

  /**
   * Returns this profile with another queue cost per running sequence.
   *
   * @throws IllegalArgumentException if {@code seconds} is negative or not finite
   */
  public EngineProfile withRunningSequenceSeconds(double seconds) {
    return new EngineProfile(prefillTokensPerSecond, attentionSeconds, batchSlowdownSequences,
        seconds);
  }
}
