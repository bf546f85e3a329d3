package io.affinityrouter.core;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Zipf-distributed draws over {@code 0..n-1} (rank {@code i} has weight {@code 1 / (i + 1)^s}),
 * precomputed into a sequence so that drawing costs one array read inside a benchmark. Stateless.
 */
public final class Zipf {
  private Zipf() {}

  /**
   * A sequence of {@code length} draws (a power of two, so callers can mask a cursor).
   *
   * @throws IllegalArgumentException if {@code n <= 0}, {@code s < 0} or {@code length} is not a
   *     power of two
   */
  public static int[] sequence(int n, double s, int length, long seed) {
    if (n <= 0) {
      throw new IllegalArgumentException("n: " + n + " (expected: > 0)");
    }
    if (!(s >= 0)) {
      throw new IllegalArgumentException("s: " + s + " (expected: >= 0)");
    }
    if (Integer.bitCount(length) != 1) {
      throw new IllegalArgumentException("length: " + length + " (expected: a power of two)");
    }
    double[] cumulative = new double[n];
    double total = 0;
    for (int i = 0; i < n; i++) {
      total += 1.0 / Math.pow(i + 1, s);
      cumulative[i] = total;
    }
    SplittableRandom random = new SplittableRandom(seed);
    int[] draws = new int[length];
    for (int j = 0; j < length; j++) {
      int i = Arrays.binarySearch(cumulative, random.nextDouble() * total);
      draws[j] = Math.min(n - 1, i >= 0 ? i : -i - 1);
    }
    return draws;
  }
}
