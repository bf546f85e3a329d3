package io.affinityrouter.core;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A quantile of recent samples, in seconds, from a histogram of log-spaced buckets (10 % apart,
 * 1 ms to about 1.9 hours) whose counts are halved every {@code halfLife} samples, so the estimate
 * follows the workload. The estimate is the upper edge of the bucket holding the quantile, at most
 * 10 % above the exact value.
 *
 * <p>Thread-safe: counts are atomics, and the estimate is recomputed every
 * {@value #RECOMPUTE_EVERY} samples by the thread that records that sample. A halving that races
 * with increments may lose a few of them, which only smooths the estimate.
 */
final class DecayingQuantile {
  /** Samples between two recomputations of the estimate: {@value}. */
  static final int RECOMPUTE_EVERY = 64;
  private static final double MIN_SECONDS = 0.001;
  private static final double GROWTH = 1.1;
  private static final double LOG_GROWTH = Math.log(GROWTH);
  private static final int BUCKETS = 166; // 1 ms × 1.1^165 ≈ 6.7e3 s

  private final double quantile;
  private final int halfLife;
  private final int warmUp;
  private final AtomicLongArray counts = new AtomicLongArray(BUCKETS);
  private final AtomicLong samples = new AtomicLong();
  private volatile double estimate;

  /**
   * Creates an estimator.
   *
   * @param quantile the quantile, in (0, 1)
   * @param halfLife samples after which a sample's weight is halved (&gt; 0)
   * @param warmUp samples before the first estimate (&ge; 0); {@link #get} is 0 until then
   * @throws IllegalArgumentException if an argument is out of range
   */
  DecayingQuantile(double quantile, int halfLife, int warmUp) {
    if (!(quantile > 0 && quantile < 1)) {
      throw new IllegalArgumentException("quantile: " + quantile + " (expected: > 0 and < 1)");
    }
    if (halfLife <= 0) {
      throw new IllegalArgumentException("halfLife: " + halfLife + " (expected: > 0)");
    }
    if (warmUp < 0) {
      throw new IllegalArgumentException("warmUp: " + warmUp + " (expected: >= 0)");
    }
    this.quantile = quantile;
    this.halfLife = halfLife;
    this.warmUp = warmUp;
  }

  /** Records a sample, in seconds; negative and NaN samples are ignored. */
  void record(double seconds) {
    if (!(seconds >= 0)) {
      return;
    }
    int bucket = seconds <= MIN_SECONDS ? 0
        : (int) Math.min(BUCKETS - 1, Math.ceil(Math.log(seconds / MIN_SECONDS) / LOG_GROWTH));
    counts.incrementAndGet(bucket);
    long n = samples.incrementAndGet();
    if (n % halfLife == 0) {
      for (int j = 0; j < BUCKETS; j++) {
        long c = counts.get(j);
        if (c > 0) {
          counts.addAndGet(j, -(c / 2));
        }
      }
    }
    if (n >= warmUp && (n % RECOMPUTE_EVERY == 0 || n == warmUp)) {
      estimate = compute();
    }
  }

  private double compute() {
    long total = 0;
    for (int j = 0; j < BUCKETS; j++) {
      total += counts.get(j);
    }
    long rank = Math.max(1, (long) Math.ceil(quantile * total));
    long seen = 0;
    for (int j = 0; j < BUCKETS - 1; j++) {
      seen += counts.get(j);
      if (seen >= rank) {
        return MIN_SECONDS * Math.pow(GROWTH, j);
      }
    }
    return MIN_SECONDS * Math.pow(GROWTH, BUCKETS - 1);
  }

  /** The estimate, in seconds; 0 before {@code warmUp} samples. */
  double get() {
    return estimate;
  }
}
