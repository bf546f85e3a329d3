package io.affinityrouter.core;

import org.jspecify.annotations.Nullable;

/**
 * The affinity budget: a quantile of recent requests' best prefill times, in seconds. Within it a
 * replica holding the prompt's cache wins outright. Thread-safe.
 */
final class AffinityBudget {
  // The 98th percentile: a holder's prefill wins outright unless it is among the slowest 2% seen.
  static final double QUANTILE = 0.98;
  /** Decisions after which the histogram weighs old ones half: {@value}. */
  static final int HALF_LIFE = 4096;
  /** Decisions before the budget applies: {@value}. */
  static final int WARM_UP = 256;

  private final @Nullable DecayingQuantile bestPrefill; // null: the budget is off

  /** A budget at {@code quantile}; 0 turns it off. */
  AffinityBudget(double quantile) {
    this.bestPrefill = quantile > 0 ? new DecayingQuantile(quantile, HALF_LIFE, WARM_UP) : null;
  }

  /** Records one decision's best prefill among the replicas that could take it. */
  void record(double seconds) {
    if (bestPrefill != null && seconds < Double.POSITIVE_INFINITY) {
      bestPrefill.record(seconds);
    }
  }

  /** The budget, seconds (0: none yet, or turned off). */
  double seconds() {
    return bestPrefill == null ? 0 : bestPrefill.get();
  }
}
