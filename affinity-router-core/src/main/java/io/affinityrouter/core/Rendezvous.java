package io.affinityrouter.core;


/**
 * Rendezvous (highest-random-weight) hashing: every gateway that knows the same key and the same
 * replicas computes the same winner without talking, and removing one replica moves only the keys it
 * won. Weighted variant after Schindelhauer and Schomaker: a replica of weight {@code w} wins a share
 * {@code w / Σw} of keys. Stateless.
 */
final class Rendezvous {
  private Rendezvous() {}

  /** A 64-bit hash of a replica id (FNV-1a, then mixed). */
  static long idHash(String id) {
    return BlockHasher.fmix(BlockHasher.stringHash(id));
  }

  /** A 64-bit hash of a string key (as {@link #idHash}). */
  static long keyHash(String key) {
    return idHash(key);
  }

  /** The pair's score: higher wins. */
  static long score(long keyHash, long idHash) {
    return BlockHasher.fmix(keyHash ^ Long.rotateLeft(idHash, 17) * 0x9E3779B97F4A7C15L);
  }

  /**
   * The pair's weighted score, {@code w / -ln(u)} with {@code u} uniform in (0, 1) drawn from the
   * pair's hash: the argmax over replicas picks each with probability proportional to its weight.
   */
  static double weightedScore(long keyHash, long idHash, double weight) {
    double u = ((score(keyHash, idHash) >>> 11) + 0.5) * 0x1.0p-53;
    return weight / -Math.log(u);
  }
}
