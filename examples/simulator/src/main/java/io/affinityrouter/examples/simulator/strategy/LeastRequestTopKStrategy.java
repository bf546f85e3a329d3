package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Least-request top-k with a slow start for new pods, with AIBrix's figures: among the {@value #K} pods with the fewest in-flight requests, those within
 * {@value #EPSILON} requests of the least are candidates, one drawn at random weighted by its ramp;
 * a pod ready for less than {@value #RAMP_SECONDS} s has weight {@code age / 300 s} (linear ramp,
 * floored at 1%) so that a new pod is not flooded. In-flight counts are the gateway's own. Not
 * thread-safe (one per gateway).
 */
final class LeastRequestTopKStrategy implements RoutingStrategy {
  static final int K = 5;
  static final int EPSILON = 4;
  static final double RAMP_SECONDS = 300;

  private final SplittableRandom random;

  LeastRequestTopKStrategy(long seed) {
    this.random = new SplittableRandom(seed);
  }

  @Override
  public Route route(SimRequest request, FleetView fleet) {
    List<Replica> rs = new ArrayList<>(fleet.replicas());
    rs.sort((a, b) -> Integer.compare(fleet.localInFlight(fleet.indexOf(a)),
        fleet.localInFlight(fleet.indexOf(b))));
    int least = fleet.localInFlight(fleet.indexOf(rs.get(0)));
    int n = Math.min(K, rs.size());
    double[] weights = new double[n];
    double total = 0;
    for (int i = 0; i < n; i++) {
      int idx = fleet.indexOf(rs.get(i));
      if (fleet.localInFlight(idx) > least + EPSILON) {
        break;
      }
      double age = (fleet.nowNanos() - fleet.readySinceNanos(idx)) / 1e9;
      weights[i] = fleet.readySinceNanos(idx) == 0 ? 1.0
          : Math.max(0.01, Math.min(1.0, age / RAMP_SECONDS));
      total += weights[i];
    }
    double x = random.nextDouble() * total;
    for (int i = 0; i < n; i++) {
      x -= weights[i];
      if (weights[i] > 0 && x <= 0) {
        return Route.of(fleet.indexOf(rs.get(i)), "top-k");
      }
    }
    return Route.of(fleet.indexOf(rs.get(0)), "top-k");
  }
}
