package io.affinityrouter.core;

/**
 * An exponentially weighted moving average of samples, starting from a prior.
 *
 * <p>Thread-safe in the way an estimate needs: updates are plain read-modify-write on a volatile, so
 * two racing updates may lose one sample, which only makes the average a little slower to move.
 */
final class Ewma {
  private final double alpha;
  private volatile double value;

  /**
   * Creates an average.
   *
   * @param alpha the weight of each new sample, in (0, 1]
   * @param prior the value before any sample
   * @throws IllegalArgumentException if {@code alpha} is out of range or {@code prior} not finite
   */
  Ewma(double alpha, double prior) {
    if (!(alpha > 0 && alpha <= 1)) {
      throw new IllegalArgumentException("alpha: " + alpha + " (expected: > 0 and <= 1)");
    }
    if (!Double.isFinite(prior)) {
      throw new IllegalArgumentException("prior: " + prior + " (expected: finite)");
    }
    this.alpha = alpha;
    this.value = prior;
  }

  /** Adds a sample; NaN and infinite samples are ignored. */
  void add(double sample) {
    if (Double.isFinite(sample)) {
      double v = value;
      value = v + alpha * (sample - v);
    }
  }

  /** The current average. */
  double get() {
    return value;
  }
}
