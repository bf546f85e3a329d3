package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import io.affinityrouter.examples.simulator.workload.SegmentKeys;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * vLLM production-stack's session router ({@code SessionRouter} in
 * {@code src/vllm_router/routers/routing_logic.py}): a consistent hash ring over the replicas keyed
 * by the session id (it uses {@code uhashring}, {@value #POINTS_PER_REPLICA} points per node in
 * ketama mode); requests without a session go to the least-loaded replica (production-stack falls
 * back to the lowest QPS). Every gateway computes the same ring, so a session lands on the same
 * replica whichever gateway it reaches; when the replica set changes only the sessions on the changed
 * arc move. Load is ignored: a hot session stays where it hashes. Not thread-safe (one per gateway).
 */
final class ConsistentHashStrategy implements RoutingStrategy {
  /** Ring points per replica (uhashring's ketama default: 40 vnodes × 4 points). */
  static final int POINTS_PER_REPLICA = 160;

  private final SplittableRandom random;
  private final TreeMap<Long, Replica> ring = new TreeMap<>();
  private List<Replica> ringOf;

  ConsistentHashStrategy(long seed) {
    this.random = new SplittableRandom(seed);
  }

  @Override
  public Route route(SimRequest request, FleetView fleet) {
    List<Replica> rs = fleet.replicas();
    if (request.session() == null) {
      return Route.of(LeastLoaded.pick(rs, fleet, random), "no-session");
    }
    if (!sameIds(rs)) {
      ring.clear();
      for (Replica r : rs) {
        for (int p = 0; p < POINTS_PER_REPLICA; p++) {
          ring.put(hash(r.id() + "#" + p), r);
        }
      }
      ringOf = rs;
    }
    var entry = ring.ceilingEntry(hash(request.session()));
    Replica r = entry != null ? entry.getValue() : ring.firstEntry().getValue();
    return Route.of(fleet.indexOf(r), "hash");
  }

  private boolean sameIds(List<Replica> rs) {
    if (ringOf == null || ringOf.size() != rs.size()) {
      return false;
    }
    for (int i = 0; i < rs.size(); i++) {
      if (!ringOf.get(i).id().equals(rs.get(i).id())) {
        return false;
      }
    }
    return true;
  }

  private static long hash(String s) {
    long h = 0;
    for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
      h = SegmentKeys.mix(h * 31 + b);
    }
    return h;
  }
}
