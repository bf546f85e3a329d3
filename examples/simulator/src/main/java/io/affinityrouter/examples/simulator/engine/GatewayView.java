package io.affinityrouter.examples.simulator.engine;

import io.affinityrouter.Replica;
import io.affinityrouter.examples.simulator.fleet.EngineConfig;
import io.affinityrouter.examples.simulator.fleet.ReplicaEngine;
import io.affinityrouter.examples.simulator.strategy.FleetView;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.List;
import java.util.Map;

/**
 * One gateway's {@link FleetView}: the replicas as last scraped, this gateway's in-flight counts,
 * and the engines' exact caches (for routers fed by KV events). Not thread-safe; owned by a
 * {@link Simulation}, which updates the replica list after each scrape or fleet change.
 */
final class GatewayView implements FleetView {
  private final SimClock clock;
  private final ReplicaEngine[] engines;
  private final EngineConfig engine;
  private final Map<String, Integer> indexById;
  private final int[] inFlight;
  private final long[] readyNanos;
  private List<Replica> replicas = List.of();

  GatewayView(SimClock clock, ReplicaEngine[] engines, EngineConfig engine,
      Map<String, Integer> indexById, int[] inFlight, long[] readyNanos) {
    this.clock = clock;
    this.engines = engines;
    this.engine = engine;
    this.indexById = indexById;
    this.inFlight = inFlight;
    this.readyNanos = readyNanos;
  }

  void replicas(List<Replica> current) {
    this.replicas = current;
  }

  @Override
  public long nowNanos() {
    return clock.nanos();
  }

  @Override
  public List<Replica> replicas() {
    return replicas;
  }

  @Override
  public int indexOf(Replica replica) {
    Integer i = indexById.get(replica.id());
    if (i == null) {
      throw new IllegalArgumentException("replica: " + replica.id() + " (expected: in fleet)");
    }
    return i;
  }

  @Override
  public int localInFlight(int replicaIndex) {
    return inFlight[replicaIndex];
  }

  @Override
  public int exactCachedTokens(int replicaIndex, SimRequest request) {
    return request.cachedTokensOf(engines[replicaIndex].cache().matchedSegments(request.keys()));
  }

  @Override
  public int blockSize() {
    return engine.blockSize();
  }

  @Override
  public long kvCapacityTokens(int replicaIndex) {
    return engine.kvCapacityTokens();
  }

  @Override
  public long readySinceNanos(int replicaIndex) {
    return readyNanos[replicaIndex];
  }
}
