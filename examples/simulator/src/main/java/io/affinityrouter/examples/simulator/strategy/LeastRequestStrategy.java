package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.SplittableRandom;

/**
 * The replica with the fewest of this gateway's requests in flight, ties at random (AIBrix
 * {@code least-request}, {@code pkg/plugins/gateway/algorithms/least_request.go}; Envoy's
 * least-request without the power-of-two sampling). Not thread-safe (one per gateway).
 */
final class LeastRequestStrategy implements RoutingStrategy {
  private final SplittableRandom random;

  LeastRequestStrategy(long seed) {
    this.random = new SplittableRandom(seed);
  }

  @Override
  public Route route(SimRequest request, FleetView fleet) {
    return Route.of(LeastLoaded.pick(fleet.replicas(), fleet, random), "least-request");
  }
}
