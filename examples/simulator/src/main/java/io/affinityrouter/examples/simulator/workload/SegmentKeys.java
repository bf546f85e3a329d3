package io.affinityrouter.examples.simulator.workload;

/**
 * Chained segment keys and the synthetic tokens of a segment, both pure functions of trace ids.
 *
 * <p>Keys chain like vLLM's block hashes: a segment's key mixes the previous key with the segment's
 * id, so equal keys mean equal prefixes. Tokens are what the real router hashes: each trace id maps
 * to a fixed pseudo-random token sequence, so two prompts with the same ids have the same tokens and
 * the router's own chained hashing sees equal prefixes as equal. Thread-safe (stateless).
 */
public final class SegmentKeys {
  /** The key before the first segment. */
  public static final long ROOT = 0x5EED_CAFE_F00D_BEEFL;
  /** Token ids are drawn below this (the size of a typical BPE vocabulary, 2^17). */
  public static final int VOCABULARY = 1 << 17;

  private SegmentKeys() {}

  /** The key of a segment with id {@code id} after a prefix whose key is {@code previous}. */
  public static long chain(long previous, long id) {
    return mix(previous * 0x9E3779B97F4A7C15L + mix(id));
  }

  /** The {@code index}-th synthetic token of segment {@code id}. */
  public static int token(long id, int index) {
    return (int) ((mix(id * 0x100000001B3L + index) >>> 1) % VOCABULARY);
  }

  /** SplitMix64's finaliser. */
  public static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
