package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.List;
import java.util.SplittableRandom;

/** Uniformly random replica: the baseline. Not thread-safe (one per gateway). */
final class RandomStrategy implements RoutingStrategy {
  private final SplittableRandom random;

  RandomStrategy(long seed) {
    this.random = new SplittableRandom(seed);
  }

  @Override
  public Route route(SimRequest request, FleetView fleet) {
    List<Replica> rs = fleet.replicas();
    return Route.of(fleet.indexOf(rs.get(random.nextInt(rs.size()))), "random");
  }
}
