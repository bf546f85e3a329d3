package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.IntToLongFunction;

/**
 * SGLang Model Gateway's {@code cache_aware} policy (sgl-project/sglang, {@code sgl-model-gateway/
 * src/policies/cache_aware.rs}; defaults from the gateway's CLI: cache threshold 0.3, balance
 * thresholds 64 and 1.5, {@code max_tree_size} 2^26 characters, eviction every 120 s):
 *
 * <ol>
 *   <li>if the load is imbalanced — max − min of the gateway's own in-flight requests per worker
 *       (its {@code Worker::load} counter) &gt; {@value #BALANCE_ABS_THRESHOLD} and max &gt;
 *       {@value #BALANCE_REL_THRESHOLD} × min — send to the least-loaded worker, the first in
 *       worker order on a tie (Rust's {@code min_by_key});
 *   <li>else match the prompt against the gateway's approximate radix tree (one tree, each node
 *       tagged with the workers it was sent to): if the best worker's match rate exceeds
 *       {@value #CACHE_THRESHOLD}, send there;
 *   <li>else (a miss) {@link Miss#LEAST_LOADED}: the least-loaded worker, ties uniformly at random
 *       (SGLang #14650, #33138); or, for {@code sglang-cache-aware-2025}, {@link
 *       Miss#SMALLEST_TREE}: the worker whose tree is smallest (the rule of the releases up to
 *       November 2025, which piles cold requests on one worker, SGLang #14305).
 * </ol>
 *
 * The chosen worker's tree then records the prompt, on every path. The tree learns only from this
 * gateway's own decisions and is trimmed by LRU beyond {@code max_tree_size} (2^26 characters ≈
 * 2^24 tokens per worker; the real gateway trims every 120 s, here on insertion). Matching is per
 * segment, not per character. Not thread-safe (one per gateway).
 */
final class SglangCacheAwareStrategy implements RoutingStrategy {
  static final double CACHE_THRESHOLD = 0.3;
  static final int BALANCE_ABS_THRESHOLD = 64;
  static final double BALANCE_REL_THRESHOLD = 1.5;
  static final long MAX_TREE_TOKENS = 1L << 24;

  /** Where a request whose best match rate is at most the cache threshold goes. */
  enum Miss {
    /** The least-loaded worker, ties uniformly at random (the gateway's current rule). */
    LEAST_LOADED,
    /** The worker with the smallest tree (the rule of the releases up to November 2025). */
    SMALLEST_TREE
  }

  private final SplittableRandom random;
  private final Miss miss;
  private final SentPrefixIndex tree = new SentPrefixIndex(MAX_TREE_TOKENS);

  SglangCacheAwareStrategy(long seed, Miss miss) {
    this.random = new SplittableRandom(seed);
    this.miss = miss;
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
      chosen = firstLeastLoaded(rs, fleet);
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
      } else if (miss == Miss.LEAST_LOADED) {
        chosen = LeastLoaded.pick(rs, fleet, random);
        reason = "least-loaded";
      } else {
        chosen = smallestTree(rs, fleet);
        reason = "smallest-tree";
      }
    }
    tree.record(chosen, request);
    return Route.of(chosen, reason);
  }

  /** Tokens the gateway's tree holds for the replica (for tests). */
  long treeTokens(int replicaIndex) {
    return tree.sizeTokens(replicaIndex);
  }

  private static int firstLeastLoaded(List<Replica> rs, FleetView fleet) {
    return firstLowest(rs, fleet, fleet::localInFlight);
  }

  private int smallestTree(List<Replica> rs, FleetView fleet) {
    return firstLowest(rs, fleet, tree::sizeTokens);
  }

  /** The first replica, in list order, with the lowest {@code value} of its index. */
  private static int firstLowest(List<Replica> rs, FleetView fleet, IntToLongFunction value) {
    int chosen = -1;
    long lowest = Long.MAX_VALUE;
    for (Replica r : rs) {
      int idx = fleet.indexOf(r);
      long v = value.applyAsLong(idx);
      if (v < lowest) {
        lowest = v;
        chosen = idx;
      }
    }
    return chosen;
  }
}
