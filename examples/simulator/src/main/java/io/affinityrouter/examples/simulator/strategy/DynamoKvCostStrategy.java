package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * NVIDIA Dynamo's KV router (ai-dynamo/dynamo, {@code lib/llm/src/kv_router/scheduler.rs}, the
 * default cost function with {@code overlap_score_weight} 1.0 and temperature 0):
 *
 * <pre>
 *   cost = 1.0 · (prompt blocks not cached on the worker) + (active blocks on the worker)
 * </pre>
 *
 * lowest cost wins, ties at random. Cached blocks come from the workers' KV events, so this router
 * knows each engine's exact cache ({@link FleetView#exactCachedTokens}); active blocks are the blocks
 * of requests this router sent there that have not finished (its {@code ActiveSequences}; each router
 * instance only sees its own). Not thread-safe (one per gateway).
 */
final class DynamoKvCostStrategy implements RoutingStrategy {
  static final double OVERLAP_WEIGHT = 1.0;

  private final SplittableRandom random;
  private final Map<Integer, Long> activeBlocks = new HashMap<>();
  private int blockSize = 16;

  DynamoKvCostStrategy(long seed) {
    this.random = new SplittableRandom(seed);
  }

  @Override
  public Route route(SimRequest request, FleetView fleet) {
    List<Replica> rs = fleet.replicas();
    int bs = fleet.blockSize();
    blockSize = bs;
    int promptBlocks = (request.inputTokens() + bs - 1) / bs;
    double[] costs = new double[rs.size()];
    for (int i = 0; i < costs.length; i++) {
      int idx = fleet.indexOf(rs.get(i));
      int cachedBlocks = fleet.exactCachedTokens(idx, request) / bs;
      costs[i] = OVERLAP_WEIGHT * (promptBlocks - cachedBlocks)
          + activeBlocks.getOrDefault(idx, 0L);
    }
    int best = LeastLoaded.lowest(rs, costs, fleet, random);
    activeBlocks.merge(best, (long) blocksOf(request, bs), Long::sum);
    return Route.of(best, "kv-cost");
  }

  private static int blocksOf(SimRequest request, int bs) {
    return (request.inputTokens() + request.outputTokens() + bs - 1) / bs;
  }

  @Override
  public void onFinished(SimRequest request, Route route, int outputTokens) {
    activeBlocks.merge(route.replicaIndex(), -(long) blocksOf(request, blockSize), Long::sum);
  }
}
