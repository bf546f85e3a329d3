package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

/**
 * AIBrix's {@code prefix-cache} routing (vllm-project/aibrix, {@code pkg/plugins/gateway/algorithms/
 * prefix_cache.go}, pseudo-code in that folder's {@code README.md}):
 *
 * <ol>
 *   <li>if max − min running requests over the pods &gt; {@value #ABS_RUNNING_REQUEST_COUNT}, the
 *       load is imbalanced: least-request;
 *   <li>else the pods whose prefix table matches the prompt, by match percentage (highest first,
 *       then fewest running requests): the first whose running requests ≤ mean + σ over all pods;
 *   <li>else least-request.
 * </ol>
 *
 * The prefix table is the gateway's own, learned from where it sent prompts (capacity per pod here
 * the pod's KV capacity in tokens); running requests are the gateway's own in-flight counts. Not
 * thread-safe (one per gateway).
 */
final class AibrixPrefixCacheStrategy implements RoutingStrategy {
  /** AIBrix's {@code AIBRIX_PREFIX_CACHE_ABS_RUNNING_REQUEST_COUNT} default. */
  static final int ABS_RUNNING_REQUEST_COUNT = 8;

  private final SplittableRandom random;
  private SentPrefixIndex table;

  AibrixPrefixCacheStrategy(long seed) {
    this.random = new SplittableRandom(seed);
  }

  @Override
  public Route route(SimRequest request, FleetView fleet) {
    List<Replica> rs = fleet.replicas();
    if (table == null) {
      table = new SentPrefixIndex(fleet.kvCapacityTokens(fleet.indexOf(rs.get(0))));
    }
    int max = 0;
    int min = Integer.MAX_VALUE;
    double sum = 0;
    double sumSq = 0;
    for (Replica r : rs) {
      int load = fleet.localInFlight(fleet.indexOf(r));
      max = Math.max(max, load);
      min = Math.min(min, load);
      sum += load;
      sumSq += (double) load * load;
    }
    int chosen = -1;
    String reason = "least-request";
    if (max - min > ABS_RUNNING_REQUEST_COUNT) {
      reason = "imbalance";
    } else {
      double mean = sum / rs.size();
      double sigma = Math.sqrt(Math.max(0, sumSq / rs.size() - mean * mean));
      List<int[]> matched = new ArrayList<>();
      for (Replica r : rs) {
        int idx = fleet.indexOf(r);
        int m = table.matchedTokens(idx, request);
        if (m > 0) {
          matched.add(new int[] {idx, m, fleet.localInFlight(idx)});
        }
      }
      matched.sort(Comparator.<int[]>comparingInt(a -> -a[1]).thenComparingInt(a -> a[2]));
      for (int[] m : matched) {
        if (m[2] <= mean + sigma) {
          chosen = m[0];
          reason = "prefix";
          break;
        }
      }
    }
    if (chosen < 0) {
      chosen = LeastLoaded.pick(rs, fleet, random);
    }
    table.record(chosen, request);
    return Route.of(chosen, reason);
  }
}
