package io.affinityrouter.examples.simulator.fleet;

import io.affinityrouter.examples.simulator.workload.SimRequest;
import org.jspecify.annotations.Nullable;

/**
 * One request inside a replica's engine: how much of its prompt was cached, prefilled, and how many
 * output tokens it has produced. Mutable; owned by one {@link ReplicaEngine}.
 *
 * <p>A preempted sequence keeps its output tokens (they were streamed) and loses its KV: on
 * re-admission it prefills its prompt and its output tokens again, less what the prefix cache still
 * holds of its prompt (vLLM V1's recompute preemption: {@code num_computed_tokens} reset to 0, and
 * {@code num_tokens} to schedule includes the output tokens).
 */
public final class Sequence {
  private final SimRequest request;
  private final int[] segmentBlocks;
  private final int outputBlocks;
  private final @Nullable Object attachment;
  int matchedSegments = -1;
  /** Prompt tokens cached at the current admission. */
  int cached;
  /** Prompt tokens cached at the first admission (what vLLM reports as the request's hit). */
  int firstCached = -1;
  /** Tokens prefilled since the current admission (prompt, then the output tokens recomputed). */
  int prefilled;
  int generated;
  int plannedTokens;
  boolean published;
  int publishedSegments;
  long publishedTokens;
  /** Output tokens whose KV the current admission recomputes (those generated before preemption). */
  int recomputeOutput;
  /** Tokens whose KV the sequence holds now. */
  long kvTokens;
  /** The most tokens whose KV it ever held: those it recomputes after a preemption are waste. */
  long computedBefore;
  /** Tokens still to prefill of those computed before a preemption. */
  long recomputeLeft;
  /** Output blocks allocated since the current admission. */
  int outputBlocksHeld;
  int preemptions;

  /**
   * Creates a sequence for a request.
   *
   * @param request the request
   * @param config the engine configuration (for block sizes)
   * @param attachment the simulation's bookkeeping for the request, returned to its listener
   */
  public Sequence(SimRequest request, EngineConfig config, @Nullable Object attachment) {
    this.request = request;
    int[] tokens = request.segmentTokens();
    this.segmentBlocks = new int[tokens.length];
    for (int i = 0; i < tokens.length; i++) {
      segmentBlocks[i] = config.blocksFor(tokens[i]);
    }
    this.outputBlocks = config.blocksFor(request.outputTokens());
    this.attachment = attachment;
  }

  /** The request. */
  public SimRequest request() {
    return request;
  }

  /** The simulation's bookkeeping object given at construction. */
  public @Nullable Object attachment() {
    return attachment;
  }

  /**
   * Prompt tokens found cached at the first admission (0 before it); a preempted sequence keeps
   * this figure, as vLLM keeps {@code num_cached_tokens}.
   */
  public int cachedTokens() {
    return Math.max(0, firstCached);
  }

  /** Whether the engine admitted it (its blocks are allocated); false again once preempted. */
  public boolean isAdmitted() {
    return matchedSegments >= 0;
  }

  /** Output tokens produced so far. */
  public int generated() {
    return generated;
  }

  /** Times the engine preempted it. */
  public int preemptions() {
    return preemptions;
  }

  int[] segmentBlocks() {
    return segmentBlocks;
  }

  /** Blocks of the whole output: what the sequence needs at most beyond its prompt. */
  int outputBlocks() {
    return outputBlocks;
  }

  int prefillRemaining() {
    return request.inputTokens() + recomputeOutput - cached - prefilled;
  }

  long contextTokens() {
    return (long) request.inputTokens() + generated;
  }
}
