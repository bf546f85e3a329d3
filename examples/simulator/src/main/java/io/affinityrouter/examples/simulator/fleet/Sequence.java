package io.affinityrouter.examples.simulator.fleet;

import io.affinityrouter.examples.simulator.workload.SimRequest;
import org.jspecify.annotations.Nullable;

/**
 * One request inside a replica's engine: how much of its prompt was cached, prefilled, and how many
 * output tokens it has produced. Mutable; owned by one {@link ReplicaEngine}.
 */
public final class Sequence {
  private final SimRequest request;
  private final int[] segmentBlocks;
  private final int outputBlocks;
  private final @Nullable Object attachment;
  int matchedSegments = -1;
  int cachedTokens;
  int prefilled;
  int generated;
  int plannedTokens;
  boolean published;
  int publishedSegments;
  long publishedTokens;

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

  /** Prompt tokens found cached at admission (0 before admission). */
  public int cachedTokens() {
    return cachedTokens;
  }

  /** Whether the engine admitted it (its blocks are allocated). */
  public boolean isAdmitted() {
    return matchedSegments >= 0;
  }

  /** Output tokens produced so far. */
  public int generated() {
    return generated;
  }

  int[] segmentBlocks() {
    return segmentBlocks;
  }

  int outputBlocks() {
    return outputBlocks;
  }

  int prefillRemaining() {
    return request.inputTokens() - cachedTokens - prefilled;
  }

  long contextTokens() {
    return (long) request.inputTokens() + generated;
  }
}
