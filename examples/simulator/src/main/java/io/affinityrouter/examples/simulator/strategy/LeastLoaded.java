package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import java.util.List;
import java.util.random.RandomGenerator;

/**
 * Picks, among replicas, the one with the fewest requests this gateway has in flight there, ties
 * broken uniformly at random (the fallback most routers share). Stateless and thread-safe.
 */
final class LeastLoaded {
  private LeastLoaded() {}

  /** The fleet index of the least-loaded replica of {@code candidates}. */
  static int pick(List<Replica> candidates, FleetView fleet, RandomGenerator random) {
    int best = -1;
    int bestLoad = Integer.MAX_VALUE;
    int ties = 0;
    for (Replica r : candidates) {
      int idx = fleet.indexOf(r);
      int load = fleet.localInFlight(idx);
      if (load < bestLoad) {
        best = idx;
        bestLoad = load;
        ties = 1;
      } else if (load == bestLoad && random.nextInt(++ties) == 0) {
        best = idx;
      }
    }
    return best;
  }
}
