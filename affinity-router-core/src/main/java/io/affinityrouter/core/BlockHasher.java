package io.affinityrouter.core;

import io.affinityrouter.RoutingRequest;

/**
 * Chained hashes over fixed-size blocks of a prompt: block {@code i}'s hash covers its own tokens and
 * the hash of block {@code i - 1}, so equal hashes at position {@code i} mean equal prompts up to the
 * end of block {@code i} (with 64-bit collision odds). The chain starts from a seed that mixes the
 * configured hash seed, the model and the tenant, so two tenants (or two models) never share
 * locality, as vLLM's {@code cache_salt} enters its first block.
 *
 * <p>Only full blocks are hashed (an engine caches only full blocks), and at most
 * {@code maxPromptBlocks} of them: the rest of a very long prompt counts in its token size but not in
 * its prefix. Token prompts use blocks of {@code tokenBlockSize} tokens (default 16, vLLM's block
 * size, so engine KV events map one to one); text prompts use blocks of {@code textBlockChars}
 * characters (default 64, about 16 tokens).
 *
 * <p>The per-block hash is a four-lane multiply-rotate construction (after xxHash64's rounds) over
 * pairs of tokens, finished by MurmurHash3's 64-bit mixer: independent lanes keep the CPU's
 * multipliers busy, so hashing runs at about a cycle per token. Hash value {@code 0} never occurs
 * (it marks empty slots in {@link PrefixIndex}). Immutable and thread-safe.
 */
final class BlockHasher {
  /** Default tokens per block: {@value} (vLLM's default block size). */
  static final int DEFAULT_TOKEN_BLOCK_SIZE = 16;
  /** Default characters per block for text prompts: {@value} (about 16 tokens of English). */
  static final int DEFAULT_TEXT_BLOCK_CHARS = 64;
  /** Default cap on hashed blocks per prompt: {@value} (131,072 tokens at 16 tokens a block). */
  static final int DEFAULT_MAX_PROMPT_BLOCKS = 8192;

  private static final long P1 = 0x9E3779B185EBCA87L;
  private static final long P2 = 0xC2B2AE3D27D4EB4FL;
  private static final long P3 = 0x165667B19E3779F9L;
  private static final long P4 = 0x85EBCA77C2B2AE63L;

  private final int tokenBlockSize;
  private final int textBlockChars;
  private final int maxPromptBlocks;
  private final long seed;

  /**
   * Creates a hasher.
   *
   * @throws IllegalArgumentException if a size is not positive
   */
  BlockHasher(int tokenBlockSize, int textBlockChars, int maxPromptBlocks, long seed) {
    this.tokenBlockSize = positive(tokenBlockSize, "tokenBlockSize");
    this.textBlockChars = positive(textBlockChars, "textBlockChars");
    this.maxPromptBlocks = positive(maxPromptBlocks, "maxPromptBlocks");
    this.seed = seed;
  }

  /** A hasher with the documented defaults and seed 0. */
  static BlockHasher defaults() {
    return new BlockHasher(DEFAULT_TOKEN_BLOCK_SIZE, DEFAULT_TEXT_BLOCK_CHARS,
        DEFAULT_MAX_PROMPT_BLOCKS, 0);
  }

  private static int positive(int value, String name) {
    if (value <= 0) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
    }
    return value;
  }

  /** Tokens per block. */
  int tokenBlockSize() {
    return tokenBlockSize;
  }

  /** Tokens one block of the request's prompt stands for (text blocks are estimated). */
  int tokensPerBlock(RoutingRequest request) {
    switch (request.promptKind()) {
      case TEXT:
        return Math.max(1, textBlockChars / RoutingRequest.CHARS_PER_TOKEN_ESTIMATE);
      case TOKENS:
      case BLOCK_HASHES:
      default:
        return tokenBlockSize;
    }
  }

  /** The most blocks hashed per prompt. */
  int maxPromptBlocks() {
    return maxPromptBlocks;
  }

  /** How many blocks {@link #hash} writes for the request. */
  int blockCount(RoutingRequest request) {
    switch (request.promptKind()) {
      case TOKENS:
        return Math.min(maxPromptBlocks, request.promptTokens().length / tokenBlockSize);
      case TEXT:
        return Math.min(maxPromptBlocks, request.promptText().length() / textBlockChars);
      case BLOCK_HASHES:
      default:
        return Math.min(maxPromptBlocks, request.promptBlockHashes().length);
    }
  }

  /**
   * Writes the request's block hashes into {@code out} and returns how many were written. For a
   * pre-hashed request the hashes are copied.
   *
   * @throws IllegalArgumentException if {@code out} is shorter than {@link #blockCount}
   */
  int hash(RoutingRequest request, long[] out) {
    int n = blockCount(request);
    if (out.length < n) {
      throw new IllegalArgumentException("out: " + out.length + " (expected: >= " + n + ")");
    }
    switch (request.promptKind()) {
      case TOKENS:
        hashTokens(chainSeed(request), request.promptTokens(), n, out);
        return n;
      case TEXT:
        hashText(chainSeed(request), request.promptText(), n, out);
        return n;
      case BLOCK_HASHES:
      default:
        System.arraycopy(request.promptBlockHashes(), 0, out, 0, n);
        return n;
    }
  }

  /** Returns the request's block hashes in a new array. */
  long[] hash(RoutingRequest request) {
    long[] out = new long[blockCount(request)];
    hash(request, out);
    return out;
  }

  /** The chain's starting value for the request's model and tenant. */
  long chainSeed(RoutingRequest request) {
    return chainSeed(request.model().orElse(""), request.tenant().orElse(""));
  }

  /** The chain's starting value for a model and tenant ({@code ""} for none). */
  long chainSeed(String model, String tenant) {
    return fmix(seed ^ fmix(stringHash(model) * P1 + stringHash(tenant)));
  }

  private void hashTokens(long parent, int[] tokens, int blocks, long[] out) {
    long h = parent;
    for (int b = 0; b < blocks; b++) {
      h = hashTokenBlock(h, tokens, b * tokenBlockSize, tokenBlockSize);
      out[b] = h;
    }
  }

  /**
   * The hash of one block of tokens chained after {@code parent} (a previous block's hash or a
   * {@linkplain #chainSeed chain seed}).
   */
  long hashTokenBlock(long parent, int[] tokens, int from, int length) {
    long a1 = parent + P1;
    long a2 = parent ^ P2;
    long a3 = parent - P3;
    long a4 = ~parent + P4;
    int i = from;
    int end = from + length;
    for (; i + 8 <= end; i += 8) {
      a1 = round(a1, pair(tokens[i], tokens[i + 1]));
      a2 = round(a2, pair(tokens[i + 2], tokens[i + 3]));
      a3 = round(a3, pair(tokens[i + 4], tokens[i + 5]));
      a4 = round(a4, pair(tokens[i + 6], tokens[i + 7]));
    }
    for (; i < end; i++) {
      a1 = round(a1, tokens[i] & 0xFFFFFFFFL);
    }
    return finish(a1, a2, a3, a4, length);
  }

  private void hashText(long parent, String text, int blocks, long[] out) {
    long h = parent;
    int size = textBlockChars;
    for (int b = 0; b < blocks; b++) {
      long a1 = h + P1;
      long a2 = h ^ P2;
      long a3 = h - P3;
      long a4 = ~h + P4;
      int i = b * size;
      int end = i + size;
      for (; i + 16 <= end; i += 16) {
        a1 = round(a1, quad(text, i));
        a2 = round(a2, quad(text, i + 4));
        a3 = round(a3, quad(text, i + 8));
        a4 = round(a4, quad(text, i + 12));
      }
      for (; i < end; i++) {
        a1 = round(a1, text.charAt(i));
      }
      h = finish(a1, a2, a3, a4, size);
      out[b] = h;
    }
  }

  private static long pair(int lo, int hi) {
    return (lo & 0xFFFFFFFFL) | ((long) hi << 32);
  }

  private static long quad(String s, int i) {
    return s.charAt(i) | ((long) s.charAt(i + 1) << 16) | ((long) s.charAt(i + 2) << 32)
        | ((long) s.charAt(i + 3) << 48);
  }

  private static long round(long acc, long input) {
    return Long.rotateLeft(acc + input * P2, 31) * P1;
  }

  private static long finish(long a1, long a2, long a3, long a4, int length) {
    long h = Long.rotateLeft(a1, 1) + Long.rotateLeft(a2, 7) + Long.rotateLeft(a3, 12)
        + Long.rotateLeft(a4, 18) + length;
    h = fmix(h);
    return h == 0 ? 1 : h;
  }

  /** MurmurHash3's 64-bit finaliser: a bijective mix of all 64 bits. */
  static long fmix(long h) {
    h ^= h >>> 33;
    h *= 0xFF51AFD7ED558CCDL;
    h ^= h >>> 33;
    h *= 0xC4CEB9FE1A85EC53L;
    h ^= h >>> 33;
    return h;
  }

  /** A 64-bit FNV-1a hash of a string's UTF-16 units (short strings: names and ids). */
  static long stringHash(String s) {
    long h = 0xCBF29CE484222325L;
    for (int i = 0; i < s.length(); i++) {
      h ^= s.charAt(i);
      h *= 0x100000001B3L;
    }
    return h ^ s.length();
  }
}
