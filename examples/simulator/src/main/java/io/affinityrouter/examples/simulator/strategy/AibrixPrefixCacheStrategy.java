package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.BitSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * AIBrix's {@code prefix-cache} routing without KV-event sync, on its defaults, as read in
 * vllm-project/aibrix at {@code e3e10f9e} (2026-08-22):
 *
 * <ul>
 *   <li>{@code pkg/plugins/gateway/algorithms/prefix_cache.go} ({@code routeOriginal},
 *       {@code getTargetPodListOnLoadImbalance}, {@code getTargetPodFromMatchedPods},
 *       {@code PostRouteUpdate}; imbalance count 8, σ factor 1, the character tokenizer);
 *   <li>{@code pkg/plugins/gateway/algorithms/least_request.go} ({@code getRequestCounts},
 *       {@code selectTargetPodWithLeastRequestCount}) and {@code util.go} ({@code mean},
 *       {@code standardDeviation}: the sample deviation, over n − 1);
 *   <li>{@code pkg/utils/prefixcacheindexer/hash.go} (one table per gateway process: 200,000
 *       blocks of 4 tokenizer bytes, chained xxhash, a 20-minute idle TTL checked every second)
 *       and {@code pkg/utils/lrustore/lru_store.go} (a put refreshes an entry, a get does not);
 *   <li>{@code pkg/utils/tokenizer/local_characters.go}, {@code local_tiktoken.go},
 *       {@code utils.go} (a character is a byte; a tiktoken token is 4 bytes);
 *   <li>{@code pkg/cache/cache_trace.go} ({@code addPodStats}, {@code donePodStats}: running
 *       requests are the gateway's own count of routed, unfinished requests).
 * </ul>
 *
 * <p>Per request: when max − min running requests over the ready pods &gt; {@value
 * #IMBALANCE_ABS_COUNT}, only the pods with the fewest running requests are matched; else all.
 * Each matched pod scores {@code matchedBlocks * 100 / promptBlocks} (integer division, so a short
 * match may score 0 and still count). The pod with the highest score, then the fewest running
 * requests (ties at random), among those whose running requests ≤ mean + σ over all ready pods,
 * wins; if none does (or none matched), the least-request pod of all ready pods, ties at random.
 * The prompt's blocks are then recorded for the chosen pod.
 *
 * <p>Emulation: an AIBrix block is 4 bytes, a character each with the default character tokenizer;
 * at 4 characters per token (as for the {@code llm-d} emulation) a block is one token here. The
 * table is kept as one entry per prompt segment (its blocks are always added together, in order,
 * so the LRU trims a segment's blocks from its first, and a segment's first block decides every
 * match through it); that is exact for the block LRU and costs a lookup per segment, not per
 * token. Running requests are {@link FleetView#localInFlight}: exact for one gateway; with several,
 * AIBrix adds the others' counts from its Redis snapshots, which this view does not offer.
 *
 * <p>Not thread-safe (one per gateway, as AIBrix's table lives in each gateway pod).
 */
final class AibrixPrefixCacheStrategy implements RoutingStrategy {
  /** {@code AIBRIX_PREFIX_CACHE_POD_RUNNING_REQUEST_IMBALANCE_ABS_COUNT}'s default. */
  static final int IMBALANCE_ABS_COUNT = 8;
  /** {@code AIBRIX_PREFIX_CACHE_STANDARD_DEVIATION_FACTOR}'s default. */
  static final int STANDARD_DEVIATION_FACTOR = 1;
  /** {@code AIBRIX_PREFIX_CACHE_BLOCK_NUMBER}'s default: blocks in the gateway's table. */
  static final int MAX_BLOCKS = 200_000;
  /** {@code AIBRIX_PREFIX_CACHE_BLOCK_SIZE}'s default, 4 bytes, as tokens of the simulator. */
  static final int BLOCK_TOKENS = 1;
  /** {@code AIBRIX_PREFIX_CACHE_EVICTION_DURATION_MINS}'s default: a block's idle lifetime. */
  static final long TTL_NANOS = TimeUnit.MINUTES.toNanos(20);
  /** {@code AIBRIX_PREFIX_CACHE_EVICTION_INTERVAL_SECONDS}'s default: how often TTLs apply. */
  static final long EVICTION_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** The blocks of one prompt segment in the table: those whose last token lies in it. */
  private static final class Run {
    final int blocks;
    // its last blocks still held: the LRU drops a segment's blocks from its first
    int held;
    // the pods of its first block, which every match through the segment goes by
    final BitSet pods = new BitSet();
    long putNanos;

    Run(int blocks) {
      this.blocks = blocks;
    }
  }

  private final SplittableRandom random;
  private final int maxBlocks;
  private final int blockTokens;
  // insertion order is put order, so the eldest entry is the least recently put and the oldest
  private final LinkedHashMap<Long, Run> table = new LinkedHashMap<>();
  private long heldBlocks;

  AibrixPrefixCacheStrategy(long seed) {
    this(seed, MAX_BLOCKS, BLOCK_TOKENS);
  }

  /**
   * Creates the strategy with another table size or block size (for tests).
   *
   * @throws IllegalArgumentException if {@code maxBlocks <= 0} or {@code blockTokens <= 0}
   */
  AibrixPrefixCacheStrategy(long seed, int maxBlocks, int blockTokens) {
    if (maxBlocks <= 0) {
      throw new IllegalArgumentException("maxBlocks: " + maxBlocks + " (expected: > 0)");
    }
    if (blockTokens <= 0) {
      throw new IllegalArgumentException("blockTokens: " + blockTokens + " (expected: > 0)");
    }
    this.random = new SplittableRandom(seed);
    this.maxBlocks = maxBlocks;
    this.blockTokens = blockTokens;
  }

  @Override
  public Route route(SimRequest request, FleetView fleet) {
    expire(fleet.nowNanos());
    List<Replica> rs = fleet.replicas();
    int n = rs.size();
    int[] index = new int[n];
    int[] load = new int[n];
    int min = Integer.MAX_VALUE;
    int max = Integer.MIN_VALUE;
    int width = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
      index[i] = fleet.indexOf(rs.get(i));
      load[i] = fleet.localInFlight(index[i]);
      min = Math.min(min, load[i]);
      max = Math.max(max, load[i]);
      width = Math.max(width, index[i] + 1);
      sum += load[i];
    }
    double mean = sum / n;
    double squares = 0;
    for (int l : load) {
      squares += (l - mean) * (l - mean);
    }
    double sigma = n <= 1 ? 0 : Math.sqrt(squares / (n - 1));
    boolean imbalanced = max - min > IMBALANCE_ABS_COUNT;
    BitSet candidates = new BitSet(width);
    for (int i = 0; i < n; i++) {
      if (!imbalanced || load[i] == min) {
        candidates.set(index[i]);
      }
    }
    int[] lengths = blockLengths(request);
    int promptBlocks = request.inputTokens() / blockTokens;
    int[] matched = matchedBlocks(request, lengths, candidates, width);
    double limit = mean + STANDARD_DEVIATION_FACTOR * sigma;
    int chosen = -1;
    int chosenPercent = -1;
    int chosenLoad = 0;
    int ties = 0;
    boolean anyMatch = false;
    for (int i = 0; i < n; i++) {
      if (matched[index[i]] == 0) {
        continue;
      }
      anyMatch = true;
      if (load[i] > limit) {
        continue;
      }
      int percent = (int) ((long) matched[index[i]] * 100 / promptBlocks);
      int cmp = chosen < 0 ? 1 : percent != chosenPercent
          ? Integer.compare(percent, chosenPercent)
          : Integer.compare(chosenLoad, load[i]);
      if (cmp > 0) {
        chosen = index[i];
        chosenPercent = percent;
        chosenLoad = load[i];
        ties = 1;
      } else if (cmp == 0 && random.nextInt(++ties) == 0) {
        chosen = index[i];
      }
    }
    String reason;
    if (chosen >= 0) {
      reason = imbalanced ? "imbalance-prefix" : "prefix";
    } else {
      chosen = LeastLoaded.pick(rs, fleet, random);
      reason = imbalanced ? "imbalance" : anyMatch ? "prefix-skipped" : "least-request";
    }
    sent(request, lengths, chosen, fleet.nowNanos());
    return Route.of(chosen, reason);
  }

  /** Blocks the table holds. */
  long heldBlocks() {
    return heldBlocks;
  }

  /** Records that the request was sent to the replica at {@code nowNanos}, as after a route. */
  void sent(SimRequest request, int replicaIndex, long nowNanos) {
    expire(nowNanos);
    sent(request, blockLengths(request), replicaIndex, nowNanos);
  }

  // the blocks whose last token lies in each segment (a shorter last block is not hashed)
  private int[] blockLengths(SimRequest request) {
    int[] tokens = request.segmentTokens();
    int[] lengths = new int[tokens.length];
    long start = 0;
    for (int s = 0; s < tokens.length; s++) {
      long end = start + tokens[s];
      lengths[s] = (int) (end / blockTokens - start / blockTokens);
      start = end;
    }
    return lengths;
  }

  // per fleet index, the leading blocks of the prompt whose every block lists that candidate
  private int[] matchedBlocks(SimRequest request, int[] lengths, BitSet candidates, int width) {
    int[] matched = new int[width];
    long[] keys = request.keys();
    BitSet alive = (BitSet) candidates.clone();
    int through = 0;
    for (int s = 0; s < keys.length; s++) {
      if (lengths[s] == 0) {
        continue;
      }
      Run run = table.get(keys[s]);
      if (run == null || run.held < run.blocks) {
        break;
      }
      alive.and(run.pods);
      if (alive.isEmpty()) {
        break;
      }
      through += lengths[s];
      for (int p = alive.nextSetBit(0); p >= 0; p = alive.nextSetBit(p + 1)) {
        matched[p] = through;
      }
    }
    return matched;
  }

  private void sent(SimRequest request, int[] lengths, int replicaIndex, long nowNanos) {
    long[] keys = request.keys();
    for (int s = 0; s < keys.length; s++) {
      if (lengths[s] == 0) {
        continue;
      }
      // re-inserting makes the segment the most recently put
      Run run = table.remove(keys[s]);
      if (run == null) {
        run = new Run(lengths[s]);
      } else {
        heldBlocks -= run.held;
        if (run.held < run.blocks) {
          // its first blocks come back new, listing only this pod
          run.pods.clear();
        }
      }
      run.held = run.blocks;
      run.pods.set(replicaIndex);
      run.putNanos = nowNanos;
      table.put(keys[s], run);
      heldBlocks += run.blocks;
      trim();
    }
  }

  // the LRU drops its least recently put blocks past the cap
  private void trim() {
    Iterator<Run> it = table.values().iterator();
    while (heldBlocks > maxBlocks) {
      Run eldest = it.next();
      long excess = heldBlocks - maxBlocks;
      if (eldest.held <= excess) {
        heldBlocks -= eldest.held;
        it.remove();
      } else {
        eldest.held -= (int) excess;
        heldBlocks = maxBlocks;
      }
    }
  }

  // blocks idle longer than the TTL at the last once-a-second sweep are gone
  private void expire(long nowNanos) {
    long sweep = nowNanos - Math.floorMod(nowNanos, EVICTION_INTERVAL_NANOS);
    Iterator<Run> it = table.values().iterator();
    while (it.hasNext()) {
      Run eldest = it.next();
      if (sweep - eldest.putNanos <= TTL_NANOS) {
        break;
      }
      heldBlocks -= eldest.held;
      it.remove();
    }
  }
}
