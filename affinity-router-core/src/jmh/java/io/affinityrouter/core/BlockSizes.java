package io.affinityrouter.core;


/** The block geometry the benchmarks assume: the router's defaults. */
final class BlockSizes {
  /** Tokens per block: {@value}. */
  static final int TOKENS_PER_BLOCK = BlockHasher.DEFAULT_TOKEN_BLOCK_SIZE;
  /** Token ids are drawn below this (a Llama-3-sized vocabulary): {@value}. */
  static final int VOCABULARY = 128_256;

  private BlockSizes() {}
}
