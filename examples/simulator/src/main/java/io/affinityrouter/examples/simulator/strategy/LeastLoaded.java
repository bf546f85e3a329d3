package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * The choices most routers share: the lowest of per-replica costs with ties broken uniformly at
 * random, and the least-loaded replica (fewest requests this gateway has in flight there).
 * Stateless and thread-safe.
 */
final class LeastLoaded {
  private LeastLoaded() {}

  /**
   * The fleet index of the replica of {@code candidates} with the lowest {@code costs[i]} (costs in
   * the order of the candidates), ties uniformly at random.
   */
  static int lowest(List<Replica> candidates, double[] costs, FleetView fleet,
      RandomGenerator random) {
    int best = -1;
    double bestCost = Double.POSITIVE_INFINITY;
    int ties = 0;
    for (int i = 0; i < candidates.size(); i++) {
      if (best < 0 || costs[i] < bestCost) {
        best = i;
        bestCost = costs[i];
        ties = 1;
      } else if (costs[i] == bestCost && random.nextInt(++ties) == 0) {
        best = i;
      }
    }
    return fleet.indexOf(candidates.get(best));
  }

  /** The fleet index of the least-loaded replica of {@code candidates}. */
  static int pick(List<Replica> candidates, FleetView fleet, RandomGenerator random) {
    double[] loads = new double[candidates.size()];
    for (int i = 0; i < loads.length; i++) {
      loads[i] = fleet.localInFlight(fleet.indexOf(candidates.get(i)));
    }
    return lowest(candidates, loads, fleet, random);
  }
}
