package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.examples.simulator.workload.SegmentKeys;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * llm-d's default scheduling profile (llm-d/llm-d-router, the endpoint picker's built-in default
 * configuration {@code pkg/epp/config/loader/defaults.go}: {@code queue-scorer} weight 2, {@code
 * kv-cache-utilization-scorer} weight 2, {@code prefix-cache-scorer} weight 3, {@code
 * max-score-picker}):
 *
 * <pre>
 *   score = 3·prefix + 2·queue + 2·(1 − kvUsage)
 * </pre>
 *
 * each term in [0, 1]: {@code queue} the scraped waiting queue min–max normalised ({@code (max − q)
 * / (max − min)}, 1 when all equal), {@code kvUsage} the scraped {@code vllm:kv_cache_usage_perc},
 * {@code prefix} the approximate prefix producer's match ratio: matched blocks / hashed blocks of
 * the prompt, where the prompt is cut into blocks chained like vLLM's block hashes, at most the
 * first {@link PrefixDefaults#maxPrefixTokens} tokens are hashed, a pod matches the longest run of
 * leading blocks found in its index, and each pod's index is an LRU of the block keys this
 * scheduler sent there ({@code pkg/epp/framework/plugins/requestcontrol/dataproducer/
 * approximateprefix/}, {@code prefixhash/hashing.go}, {@code scheduling/scorer/prefix/plugin.go}).
 * Highest score wins, ties uniformly at random. Two sets of prefix defaults: {@link #CURRENT} and
 * {@link #GAIE_2025}. Either way the endpoint picker refreshes the engines' metrics every {@link
 * #REFRESH_METRICS_INTERVAL_NANOS} (50 ms), the gateways' scrape interval in the simulator.
 *
 * <p>The {@code llm-d-2025} row is llm-d's 3/2/2 weights on the prefix defaults of
 * gateway-api-inference-extension v1.0–v1.1, not that release's own Helm chart: the chart's {@code
 * default-plugins.yaml} weighted the three scorers equally (1/1/1, the loader's default weight)
 * until kubernetes-sigs/gateway-api-inference-extension#1827 (November 2025, first in v1.2.0)
 * adopted the 3/2/2 that llm-d's configurations and benchmarks used. Not thread-safe (one per
 * gateway).
 */
final class LlmdScorerStrategy implements RoutingStrategy {
  static final double PREFIX_WEIGHT = 3;
  static final double QUEUE_WEIGHT = 2;
  static final double KV_WEIGHT = 2;

  /**
   * The default {@code --refresh-metrics-interval}, 50 ms: llm-d-router {@code
   * pkg/epp/server/options.go} ({@code MinRefreshMetricsInterval}, also the floor), and
   * gateway-api-inference-extension v1.0–v1.1 {@code pkg/epp/server/runserver.go} ({@code
   * DefaultRefreshMetricsInterval}).
   */
  static final long REFRESH_METRICS_INTERVAL_NANOS = 50_000_000L;

  /**
   * Characters (bytes) per token wherever upstream counts characters: its own {@code
   * averageCharactersPerToken}, and its tokenizer-free {@code estimate} backend's 4 bytes per
   * pseudo-token. The simulator's prompts are tokens, so a block of 64 characters is taken as 16
   * tokens, and a block of 64 pseudo-tokens (256 bytes) as 64 tokens.
   */
  static final int CHARS_PER_TOKEN = 4;

  /**
   * The approximate prefix producer's defaults, in the simulator's tokens.
   *
   * @param autoTune whether the block size and each pod's index capacity come from the engine's
   *     {@code vllm:cache_config_info} ({@code block_size}, {@code num_gpu_blocks})
   * @param blockTokens the block size when not auto-tuned
   * @param minBlockTokens the least block size, wherever the block size comes from
   * @param maxPrefixTokens at most this many leading tokens are hashed, in whole blocks
   * @param hashesPartialBlock whether the prompt's last block, shorter than a block, is hashed
   * @param lruCapacityPerPod block keys each pod's index holds when not auto-tuned
   */
  record PrefixDefaults(boolean autoTune, int blockTokens, int minBlockTokens,
      int maxPrefixTokens, boolean hashesPartialBlock, int lruCapacityPerPod) {

    /** The block size in tokens for this fleet. */
    int blockTokens(FleetView fleet) {
      return Math.max(autoTune ? fleet.blockSize() : blockTokens, minBlockTokens);
    }

    /** The most block keys the index of replica {@code replicaIndex} holds. */
    int lruCapacity(FleetView fleet, int replicaIndex) {
      long gpuBlocks = autoTune ? fleet.kvCapacityTokens(replicaIndex) / fleet.blockSize() : 0;
      return gpuBlocks > 0 ? (int) Math.min(gpuBlocks, Integer.MAX_VALUE) : lruCapacityPerPod;
    }
  }

  /**
   * llm-d-router's defaults ({@code approximateprefix/types.go}, {@code plugin.go}): auto-tuned,
   * the engine's block size raised to at least 64 tokens (llm-d-router #1158: vLLM's 16 becomes
   * 64), {@code maxPrefixTokensToMatch} 131,072 (2,048 blocks of 64), the last partial block
   * hashed, each pod's index as large as the pod's {@code num_gpu_blocks} (31,250 without that
   * metric; vLLM always exports it, so here the simulated engine's block count).
   */
  static final PrefixDefaults CURRENT = new PrefixDefaults(true, 16, 64, 131_072, true, 31_250);

  /**
   * The defaults of gateway-api-inference-extension v1.0–v1.1 ({@code pkg/epp/scheduling/framework/
   * plugins/multi/prefix/plugin.go}, September–October 2025): blocks of 64 characters (16 tokens at
   * {@value #CHARS_PER_TOKEN} characters per token), at most 256 blocks matched (the first 4,096
   * tokens), a last partial block ignored, 31,250 block keys per pod.
   */
  static final PrefixDefaults GAIE_2025 = new PrefixDefaults(
      false, 64 / CHARS_PER_TOKEN, 0, 256 * (64 / CHARS_PER_TOKEN), false, 31_250);

  private final SplittableRandom random;
  private final PrefixDefaults defaults;
  private LongLruSet[] index = new LongLruSet[0];

  LlmdScorerStrategy(long seed, PrefixDefaults defaults) {
    this.random = new SplittableRandom(seed);
    this.defaults = defaults;
  }

  @Override
  public Route route(SimRequest request, FleetView fleet) {
    List<Replica> rs = fleet.replicas();
    int block = defaults.blockTokens(fleet);
    long[] blocks = blockKeys(request, block, defaults.maxPrefixTokens() / block,
        defaults.hashesPartialBlock());
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
      // no hashed block (a prompt shorter than one block) scores 0 everywhere, as upstream
      double prefix = blocks.length == 0 ? 0
          : (double) matchedBlocks(fleet.indexOf(r), blocks) / blocks.length;
      double queue = maxQ == minQ ? 1.0 : (double) (maxQ - load.waitingRequests()) / (maxQ - minQ);
      double kv = 1.0 - load.kvUsage().orElse(0.0);
      negatedScores[i] = -(PREFIX_WEIGHT * prefix + QUEUE_WEIGHT * queue + KV_WEIGHT * kv);
    }
    int best = LeastLoaded.lowest(rs, negatedScores, fleet, random);
    LongLruSet lru = lru(best, defaults.lruCapacity(fleet, best));
    for (long key : blocks) {
      lru.add(key);
    }
    return Route.of(best, "score");
  }

  /** Leading blocks of {@code blocks} in the replica's index. */
  int matchedBlocks(int replicaIndex, long[] blocks) {
    if (replicaIndex >= index.length || index[replicaIndex] == null) {
      return 0;
    }
    LongLruSet lru = index[replicaIndex];
    int n = 0;
    while (n < blocks.length && lru.contains(blocks[n])) {
      n++;
    }
    return n;
  }

  /** Block keys the replica's index holds. */
  int indexedBlocks(int replicaIndex) {
    return replicaIndex < index.length && index[replicaIndex] != null
        ? index[replicaIndex].size() : 0;
  }

  // upstream sizes a pod's LRU once, when the scheduler first sends the pod a prompt
  private LongLruSet lru(int replicaIndex, int capacity) {
    if (replicaIndex >= index.length) {
      index = Arrays.copyOf(index, replicaIndex + 1);
    }
    if (index[replicaIndex] == null) {
      index[replicaIndex] = new LongLruSet(capacity);
    }
    return index[replicaIndex];
  }

  /**
   * The chained keys of the prompt's blocks of {@code blockTokens} tokens: of its first {@code
   * maxBlocks} blocks, the full ones, and the last, shorter one when {@code partial} (there is one
   * only when the whole prompt fits in {@code maxBlocks} blocks). Two prompts have equal keys for
   * a block exactly when they are equal up to the block's end.
   */
  static long[] blockKeys(SimRequest request, int blockTokens, int maxBlocks, boolean partial) {
    long limit = Math.min(request.inputTokens(), (long) blockTokens * maxBlocks);
    int full = (int) (limit / blockTokens);
    int n = full + (partial && limit % blockTokens != 0 ? 1 : 0);
    long[] out = new long[n];
    long[] keys = request.keys();
    int[] lengths = request.segmentTokens();
    int segment = 0;
    long segmentEnd = lengths[0];
    for (int i = 0; i < n; i++) {
      long end = Math.min((long) (i + 1) * blockTokens, limit);
      // the block's last token lies in the first segment ending at or after the block's end
      while (segmentEnd < end) {
        segmentEnd += lengths[++segment];
      }
      out[i] = SegmentKeys.chain(keys[segment], end);
    }
    return out;
  }
}
