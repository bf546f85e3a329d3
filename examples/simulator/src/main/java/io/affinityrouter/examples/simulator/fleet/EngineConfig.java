package io.affinityrouter.examples.simulator.fleet;

/**
 * The constants of one simulated vLLM replica. Defaults ({@link #defaults()}) are vLLM V1 defaults
 * for Qwen2.5-7B-Instruct on one H100-80GB:
 *
 * <ul>
 *   <li>{@code blockSize} {@value #DEFAULT_BLOCK_SIZE} tokens (vLLM {@code engine/arg_utils.py});
 *   <li>{@code kvBlocks} {@value #DEFAULT_KV_BLOCKS} blocks ≈ 1.08M tokens (57,344 B/token; inference-sim
 *       {@code defaults.yaml}, commit 517fe652);
 *   <li>{@code maxBatchedTokens} {@value #DEFAULT_MAX_BATCHED_TOKENS}, the chunked-prefill budget per
 *       step, and {@code maxSeqs} {@value #DEFAULT_MAX_SEQS} (vLLM defaults on GPUs ≥ 70 GiB,
 *       {@code platforms/cuda.py});
 *   <li>the step-time {@link CostModel#QWEN25_7B_H100}.
 * </ul>
 *
 * <p>Immutable and thread-safe.
 *
 * @param blockSize tokens per KV block
 * @param kvBlocks KV cache blocks per replica
 * @param maxBatchedTokens prefill + decode tokens per step
 * @param maxSeqs running sequences per step
 * @param prefixCaching whether finished prefixes are reused (vLLM automatic prefix caching, on by
 *     default in V1)
 * @param cost the step-time model
 */
public record EngineConfig(int blockSize, long kvBlocks, int maxBatchedTokens, int maxSeqs,
    boolean prefixCaching, CostModel cost) {

  /** vLLM's KV block size in tokens. */
  public static final int DEFAULT_BLOCK_SIZE = 16;
  /** KV blocks of Qwen2.5-7B on an H100-80GB at vLLM's default 0.9 memory utilisation. */
  public static final long DEFAULT_KV_BLOCKS = 67_659;
  /** vLLM's {@code max_num_batched_tokens} on large GPUs. */
  public static final int DEFAULT_MAX_BATCHED_TOKENS = 8192;
  /** vLLM's {@code max_num_seqs} on large GPUs. */
  public static final int DEFAULT_MAX_SEQS = 1024;

  /**
   * Validates the configuration.
   *
   * @throws IllegalArgumentException if a size is not positive or {@code cost} is null
   */
  public EngineConfig {
    positive(blockSize, "blockSize");
    positive(kvBlocks, "kvBlocks");
    positive(maxBatchedTokens, "maxBatchedTokens");
    positive(maxSeqs, "maxSeqs");
    if (cost == null) {
      throw new IllegalArgumentException("cost: null (expected: a cost model)");
    }
  }

  private static void positive(long value, String name) {
    if (value <= 0) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
    }
  }

  /** The documented defaults. */
  public static EngineConfig defaults() {
    return new EngineConfig(DEFAULT_BLOCK_SIZE, DEFAULT_KV_BLOCKS, DEFAULT_MAX_BATCHED_TOKENS,
        DEFAULT_MAX_SEQS, true, CostModel.QWEN25_7B_H100);
  }

  /** Returns a copy with another number of KV blocks. */
  public EngineConfig withKvBlocks(long blocks) {
    return new EngineConfig(blockSize, blocks, maxBatchedTokens, maxSeqs, prefixCaching, cost);
  }

  /** Returns a copy with prefix caching on or off. */
  public EngineConfig withPrefixCaching(boolean on) {
    return new EngineConfig(blockSize, kvBlocks, maxBatchedTokens, maxSeqs, on, cost);
  }

  /** KV capacity in tokens. */
  public long kvCapacityTokens() {
    return kvBlocks * blockSize;
  }

  /** Blocks needed for {@code tokens} tokens. */
  public int blocksFor(long tokens) {
    return (int) ((tokens + blockSize - 1) / blockSize);
  }
}
