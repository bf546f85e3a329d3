package io.affinityrouter.core;

import java.util.random.RandomGenerator;

/**
 * Least-cost-top-k: keeps the {@code k} cheapest candidates whose cost is within a window of the
 * cheapest fully ramped one, {@code max(epsilonSeconds, epsilonFraction × cheapest)}, and picks among them at random, each weighted by its ramp (after
 * AIBrix's least-request-top-k, with the request count replaced by the router's cost in seconds).
 * Several gateways that see the same costs therefore spread over near-equal replicas instead of all
 * taking the same one.
 *
 * <p><b>Ramp.</b> A replica that became ready {@code t} ago has weight
 * {@code max(minWeight, t / rampUp)} until {@code t >= rampUp}: a fresh, empty replica looks cheapest
 * to every gateway at once, and the ramp caps its share instead of letting them all herd onto it.
 * The ε window is measured from the cheapest <em>ramped</em> replica so a fresh one cannot empty the
 * window of its elders.
 *
 * <p><b>Placement.</b> When the caller passes a placement key (a cold prompt: no replica holds any of
 * its blocks), the pick among the window is weighted rendezvous hashing on that key instead of a
 * random draw: gateways that never talk send the same prompt family to the same replica, while the
 * window keeps it bounded by load.
 *
 * <p>Immutable and thread-safe; callers pass their own scratch arrays.
 */
final class TopKPicker {
  /** No placement key. */
  static final long NO_PLACEMENT = 0;
  // 2 ms, under the ~10 ms a cached 512-token context saves: short turns spread, cache stays.
  static final double EPSILON_SECONDS = 0.002;
  // 10% of the cheapest cost: long cold prefills within it count as equal and are spread.
  static final double EPSILON_FRACTION = 0.1;

  private final int k;
  private final double epsilonSeconds;
  private final double epsilonFraction;
  private final long rampUpMillis;
  private final double minRampWeight;

  /**
   * Creates a picker.
   *
   * <p>The window is relative as well as absolute so that a cached prefix is never traded for a
   * random draw: when the cheapest replica costs little (its cache saves most of the prefill), the
   * window shrinks with it; when every replica must prefill a long cold prompt, near-equal loads
   * (within {@code epsilonFraction} of that cost) count as equal and are spread.
   *
   * @throws IllegalArgumentException if {@code k <= 0}, an epsilon is negative or not finite,
   *     {@code rampUpMillis < 0} or {@code minRampWeight} is not in (0, 1]
   */
  TopKPicker(int k, double epsilonSeconds, double epsilonFraction, long rampUpMillis,
      double minRampWeight) {
    if (k <= 0) {
      throw new IllegalArgumentException("topK: " + k + " (expected: > 0)");
    }
    if (!(epsilonSeconds >= 0) || Double.isInfinite(epsilonSeconds)) {
      throw new IllegalArgumentException("epsilon: " + epsilonSeconds + " (expected: >= 0)");
    }
    if (!(epsilonFraction >= 0) || Double.isInfinite(epsilonFraction)) {
      throw new IllegalArgumentException(
          "epsilonFraction: " + epsilonFraction + " (expected: >= 0)");
    }
    if (rampUpMillis < 0) {
      throw new IllegalArgumentException("rampUp: " + rampUpMillis + " ms (expected: >= 0)");
    }
    if (!(minRampWeight > 0 && minRampWeight <= 1)) {
      throw new IllegalArgumentException(
          "minRampWeight: " + minRampWeight + " (expected: > 0 and <= 1)");
    }
    this.k = k;
    this.epsilonSeconds = epsilonSeconds;
    this.epsilonFraction = epsilonFraction;
    this.rampUpMillis = rampUpMillis;
    this.minRampWeight = minRampWeight;
  }

  /** {@code k}. */
  int k() {
    return k;
  }

  /** The ramp weight of a replica ready since {@code readySinceMillis}, at {@code nowMillis}. */
  double rampWeight(long readySinceMillis, long nowMillis) {
    long age = nowMillis - readySinceMillis;
    if (rampUpMillis == 0 || age >= rampUpMillis) {
      return 1.0;
    }
    return Math.max(minRampWeight, Math.max(0, age) / (double) rampUpMillis);
  }

  /**
   * Picks one of the allowed indices.
   *
   * @param cost each index's cost (lower is better)
   * @param allowed which indices may be picked
   * @param ramp each index's ramp weight (0..1]
   * @param idHash each index's replica id hash (for placement)
   * @param n how many indices there are
   * @param placementKey a placement key, or {@link #NO_PLACEMENT}
   * @param random the random source (used only without a placement key)
   * @param best scratch of at least {@code k} ints
   * @return the picked index, or {@code -1} if none is allowed
   */
  int pick(double[] cost, boolean[] allowed, double[] ramp, long[] idHash, int n,
      long placementKey, RandomGenerator random, int[] best) {
    int size = 0;
    for (int i = 0; i < n; i++) {
      if (!allowed[i]) {
        continue;
      }
      double c = cost[i];
      if (size < k) {
        int j = size++;
        while (j > 0 && cost[best[j - 1]] > c) {
          best[j] = best[j - 1];
          j--;
        }
        best[j] = i;
      } else if (c < cost[best[k - 1]]) {
        int j = k - 1;
        while (j > 0 && cost[best[j - 1]] > c) {
          best[j] = best[j - 1];
          j--;
        }
        best[j] = i;
      }
    }
    if (size == 0) {
      return -1;
    }
    double floor = cost[best[0]];
    for (int j = 0; j < size; j++) {
      if (ramp[best[j]] >= 1.0) {
        floor = cost[best[j]];
        break;
      }
    }
    double limit = limit(floor);
    int window = 0;
    double totalWeight = 0;
    while (window < size && cost[best[window]] <= limit) {
      totalWeight += ramp[best[window]];
      window++;
    }
    if (window == 0) {
      return best[0];
    }
    if (window == 1) {
      return best[0];
    }
    if (placementKey != NO_PLACEMENT) {
      int winner = best[0];
      double top = -1;
      for (int j = 0; j < window; j++) {
        int i = best[j];
        double s = Rendezvous.weightedScore(placementKey, idHash[i], ramp[i]);
        if (s > top) {
          top = s;
          winner = i;
        }
      }
      return winner;
    }
    double r = random.nextDouble() * totalWeight;
    for (int j = 0; j < window; j++) {
      r -= ramp[best[j]];
      if (r < 0) {
        return best[j];
      }
    }
    return best[window - 1];
  }

  /** The most a candidate may cost to be within the window of the cheapest ramped {@code floor}. */
  private double limit(double floor) {
    return floor + Math.max(epsilonSeconds, epsilonFraction * floor);
  }

  /**
   * The replica whose KV cache lives longest among the most ramped allowed ones (all fully ramped
   * ones, unless every replica is still ramping) within the window measured from the cheapest of
   * them, or {@code picked} if it is itself ramping behind its elders (its ramp-weighted share
   * stands), its own lifetime is unknown, or no other candidate's cache lives longer.
   *
   * <p>For a prompt that is written in full wherever it goes: the write evicts the chosen replica's
   * least recently used blocks, and the longer its cache lives, the older, and the less likely to be
   * asked for again, those blocks are. Every gateway reads the same engine write rates, so they
   * agree as the placement key would; the window keeps the choice bounded by load.
   *
   * @param picked the index {@link #pick} returned
   * @param lifetime each index's cache lifetime in seconds (infinite for a cache nothing was
   *     written to); NaN when unknown or not a candidate
   */
  int longestLived(int picked, double[] cost, boolean[] allowed, double[] ramp,
      double[] lifetime, int n) {
    double elder = 0;
    for (int i = 0; i < n; i++) {
      if (allowed[i]) {
        elder = Math.max(elder, ramp[i]);
      }
    }
    if (ramp[picked] < elder || Double.isNaN(lifetime[picked])) {
      return picked;
    }
    double floor = Double.POSITIVE_INFINITY;
    for (int i = 0; i < n; i++) {
      if (allowed[i] && ramp[i] >= elder) {
        floor = Math.min(floor, cost[i]);
      }
    }
    double limit = limit(floor);
    int winner = picked;
    double top = lifetime[picked];
    for (int i = 0; i < n; i++) {
      if (allowed[i] && ramp[i] >= elder && cost[i] <= limit && lifetime[i] > top) {
        top = lifetime[i];
        winner = i;
      }
    }
    return winner;
  }
}
