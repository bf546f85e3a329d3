package io.affinityrouter.core.engine;

import java.util.function.DoubleSupplier;

/**
 * Re-probe delays for a failed replica: {@code initial × 2^(n-1)} for its {@code n}-th failure in a
 * row, capped at {@code max}, then spread by ±{@code jitter} (a fraction) so replicas that failed
 * together are not re-probed together, and capped again. Thread-safe if the random source is.
 */
final class Backoff {
  private final long initialNanos;
  private final long maxNanos;
  private final double jitter;
  private final DoubleSupplier random;

  Backoff(long initialNanos, long maxNanos, double jitter, DoubleSupplier random) {
    this.initialNanos = initialNanos;
    this.maxNanos = maxNanos;
    this.jitter = jitter;
    this.random = random;
  }

  /** The delay before the re-probe after failure number {@code streak} ({@code >= 1}). */
  long delayNanos(int streak) {
    int shift = Math.min(Math.max(streak, 1) - 1, 62);
    long base = initialNanos > (maxNanos >> shift) ? maxNanos : Math.min(maxNanos, initialNanos << shift);
    if (jitter == 0) {
      return base;
    }
    double spread = 1 + jitter * (2 * random.getAsDouble() - 1);
    return Math.max(1, Math.min(maxNanos, (long) (base * spread)));
  }
}
