package io.affinityrouter;

import org.jspecify.annotations.Nullable;

/**
 * Feeds exact prefix-cache events of one replica into the router's prefix index, for gateways that
 * subscribe to the engines' KV events (vLLM's {@code BlockStored}, {@code BlockRemoved},
 * {@code AllBlocksCleared}). Without events the index is approximate, learned from the router's own
 * decisions; with them it follows what each engine really holds.
 *
 * <p>Engine block hashes are not reproducible outside the engine, so the router keys its index on its
 * own chained hash of the stored blocks' token ids and keeps a bounded map from engine hashes to its
 * own, which {@code blocksRemoved} uses. The engine's block size must be a multiple of
 * {@link #tokensPerBlock()}. Thread-safe; calls for one replica should come in the engine's order.
 */
public interface PrefixCacheEvents {

  /**
   * Blocks stored by the engine.
   *
   * @param replicaId the replica whose engine stored them
   * @param model the model (as in {@link RoutingRequest#model()}), or null when requests carry none
   * @param tenant the tenant whose salt the blocks were computed with, or null
   * @param parentEngineHash the engine hash of the block before the first one, or null for blocks
   *     that start a prompt
   * @param engineBlockHashes the engine's hashes of the stored blocks, in order
   * @param tokenIds the tokens of all stored blocks, concatenated
   * @param engineBlockSize tokens per engine block
   * @throws IllegalArgumentException if sizes disagree or the block size is not a multiple of the
   *     router's
   */
  void blocksStored(String replicaId, @Nullable String model,
      @Nullable String tenant,
      @Nullable Long parentEngineHash,
      long[] engineBlockHashes, int[] tokenIds, int engineBlockSize);

  /** Blocks removed (evicted) by the engine; unknown hashes are ignored. */
  void blocksRemoved(String replicaId, long[] engineBlockHashes);

  /** The engine dropped its whole prefix cache (restart, sleep, reset). */
  void allBlocksCleared(String replicaId);

  /**
   * Tokens per block of the index the events feed: the router's own block size
   * ({@code AffinityRouter.Builder#tokenBlockSize}). KV-event subscribers chain engine blocks into
   * blocks of this size, so a sink that wraps another returns the wrapped one's.
   */
  int tokensPerBlock();
}
