package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.List;
import java.util.SplittableRandom;

/**
 * SGLang router's {@code cache_aware} policy (sgl-project/sglang, {@code sgl-router/src/policies/
 * cache_aware.rs}; its header comment and the router's README list the thresholds):
 *
 * <ol>
 *   <li>if the load is imbalanced — max − min of the router's own in-flight requests per worker
 *       &gt; {@value #BALANCE_ABS_THRESHOLD} and max &gt; {@value #BALANCE_REL_THRESHOLD} × min — send
 *       to the least-loaded worker;
 *   <li>else match the prompt against the router's approximate radix tree (one tree, each node
 *       tagged with the workers it was sent to): if the best worker's match rate exceeds
 *       {@value #CACHE_THRESHOLD}, send there;
 *   <li>else send to the worker whose tree is smallest (the "smallest tree" rule that can pile cold
 *       requests on one worker, SGLang #14305).
 * </ol>
 *
 * The chosen worker's tree then records the prompt. The tree learns only from this router's own
 * decisions and is trimmed by LRU beyond {@code max_tree_size} (2^26 characters ≈ 2^24 tokens per
 * worker; the real router trims every 120 s, here on insertion). Matching is per segment, not per
 * character. The cache threshold is 0.3 (older router releases used 0.5). Not thread-safe (one per gateway).
 */
final class SglangCacheAwareStrategy implements RoutingStrategy {
  static final double CACHE_THRESHOLD = 0.3;
  static final int BALANCE_ABS_THRESHOLD = 64;
  static final double BALANCE_REL_THRESHOLD = 1.5;
  static final long MAX_TREE_TOKENS = 1L << 24;

  private final SplittableRandom random;
  private final SentPrefixIndex tree = new SentPrefixIndex(MAX_TREE_TOKENS);

  SglangCacheAwareStrategy(long seed) {
    this.random = new SplittableRandom(seed);
  }

  @Override
  public Route route(SimRequest request, FleetView fleet) {
    List<Replica> rs = fleet.replicas();
    int max = 0;
    int min = Integer.MAX_VALUE;
    for (Replica r : rs) {
      int load = fleet.localInFlight(fleet.indexOf(r));
      max = Math.max(max, load);
      min = Math.min(min, load);
    }
    int chosen;
    String reason;
    if (max - min > BALANCE_ABS_THRESHOLD && max > BALANCE_REL_THRESHOLD * min) {
      chosen = LeastLoaded.pick(rs, fleet, random);
      reason = "imbalance";
    } else {
      int best = -1;
      int bestMatch = -1;
      for (Replica r : rs) {
        int idx = fleet.indexOf(r);
        int m = tree.matchedTokens(idx, request);
        if (m > bestMatch) {
          best = idx;
          bestMatch = m;
        }
      }
      if ((double) bestMatch / request.inputTokens() > CACHE_THRESHOLD) {
        chosen = best;
        reason = "prefix";
      } else {
        chosen = -1;
        long smallest = Long.MAX_VALUE;
        for (Replica r : rs) {
          int idx = fleet.indexOf(r);
          long size = tree.sizeTokens(idx);
          if (size < smallest) {
            smallest = size;
            chosen = idx;
          }
        }
        reason = "smallest-tree";
      }
    }
    tree.record(chosen, request);
    return Route.of(chosen, reason);
  }
}
