package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.List;

/**
 * Round robin over the current replicas, each gateway with its own counter (as vLLM
 * production-stack's {@code RoundRobinRouter} in {@code src/vllm_router/routers/routing_logic.py}).
 * Not thread-safe (one per gateway).
 */
final class RoundRobinStrategy implements RoutingStrategy {
  private long next;

  RoundRobinStrategy(int gateway) {
    this.next = gateway;
  }

  @Override
  public Route route(SimRequest request, FleetView fleet) {
    List<Replica> rs = fleet.replicas();
    return Route.of(fleet.indexOf(rs.get((int) (next++ % rs.size()))), "round-robin");
  }
}
