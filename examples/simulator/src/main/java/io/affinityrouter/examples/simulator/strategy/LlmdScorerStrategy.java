package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.List;
import java.util.SplittableRandom;

/**
 * llm-d's default inference-scheduler profile (the gateway-api-inference-extension EPP with
 * {@code prefix-cache-scorer} weight 3, {@code queue-scorer} weight 2, {@code kv-cache-utilization-
 * scorer} weight 2, {@code max-score-picker}; plugins under {@code pkg/epp/scheduling/framework/
 * plugins/}):
 *
 * <pre>
 *   score = 3·prefix + 2·queue + 2·(1 − kvUsage)
 * </pre>
 *
 * each term in [0, 1]: {@code prefix} the fraction of the prompt found in the pod's LRU of prompts
 * this scheduler sent there (the approximate prefix plugin, {@code multi/prefix/plugin.go}; capacity
 * per pod here the pod's KV capacity in tokens), {@code queue} the scraped waiting queue min–max
 * normalised ({@code (max − q) / (max − min)}, 1 when all equal), {@code kvUsage} the scraped
 * {@code vllm:kv_cache_usage_perc}. Highest score wins, ties at random. Not thread-safe (one per
 * gateway).
 */
final class LlmdScorerStrategy implements RoutingStrategy {
  static final double PREFIX_WEIGHT = 3;
  static final double QUEUE_WEIGHT = 2;
  static final double KV_WEIGHT = 2;

  private final SplittableRandom random;
  private SentPrefixIndex lru;

  LlmdScorerStrategy(long seed) {
    this.random = new SplittableRandom(seed);
  }

  @Override
  public Route route(SimRequest request, FleetView fleet) {
    List<Replica> rs = fleet.replicas();
    if (lru == null) {
      lru = new SentPrefixIndex(fleet.kvCapacityTokens(fleet.indexOf(rs.get(0))));
    }
    int minQ = Integer.MAX_VALUE;
    int maxQ = 0;
    for (Replica r : rs) {
      int q = r.load().waitingRequests();
      minQ = Math.min(minQ, q);
      maxQ = Math.max(maxQ, q);
    }
    double[] negatedScores = new double[rs.size()];
    for (int i = 0; i < negatedScores.length; i++) {
      Replica r = rs.get(i);
      ReplicaLoad load = r.load();
      double prefix = (double) lru.matchedTokens(fleet.indexOf(r), request) / request.inputTokens();
      double queue = maxQ == minQ ? 1.0 : (double) (maxQ - load.waitingRequests()) / (maxQ - minQ);
      double kv = 1.0 - load.kvUsage().orElse(0.0);
      negatedScores[i] = -(PREFIX_WEIGHT * prefix + QUEUE_WEIGHT * queue + KV_WEIGHT * kv);
    }
    int best = LeastLoaded.lowest(rs, negatedScores, fleet, random);
    lru.record(best, request);
    return Route.of(best, "score");
  }
}
