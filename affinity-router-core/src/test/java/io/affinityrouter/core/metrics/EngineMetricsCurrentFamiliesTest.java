package io.affinityrouter.core.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.ReplicaLoad;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The families today's engines export beyond the load gauges: vLLM's waiting reasons, prompt tokens
 * by source and preemptions; SGLang's per-rank series, KV slot counts and hybrid-model usages.
 * Read from the captured fixtures where they hold the family, else from snippets written as the
 * engine's Prometheus client prints them.
 */
class EngineMetricsCurrentFamiliesTest {
  private static final String QWEN3 = "Qwen/Qwen3-0.6B";
  private static final String QWEN_CODER = "Qwen/Qwen2.5-Coder-1.5B-Instruct";

  @Test
  void vllmWaitingByReasonFromTheV0_26_0Capture() {
    String capture = Fixtures.read(Fixtures.VLLM_V1_LLMD);
    ModelMetrics idle = EngineMetrics.parseStrict(capture).model(QWEN3).orElseThrow();
    assertThat(idle.waitingForCapacity()).hasValue(0);
    assertThat(idle.waitingDeferred()).hasValue(0);

    // The same capture under load: the reasons add up to num_requests_waiting, as its HELP says.
    String loaded = capture
        .replace("vllm:num_requests_waiting{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\"} 0.0",
            "vllm:num_requests_waiting{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\"} 12.0")
        .replace("reason=\"capacity\"} 0.0", "reason=\"capacity\"} 9.0")
        .replace("reason=\"deferred\"} 0.0", "reason=\"deferred\"} 3.0");
    EngineMetrics m = EngineMetrics.parseStrict(loaded);

    ModelMetrics model = m.model(QWEN3).orElseThrow();
    assertThat(model.waitingForCapacity()).hasValue(9);
    assertThat(model.waitingDeferred()).hasValue(3);
    assertThat(model.load().waitingRequests()).as("the total, both reasons").isEqualTo(12);
    assertThat(m.anomalies()).isZero();
    // An older vLLM without the family reports no split.
    assertThat(EngineMetrics.parseStrict(Fixtures.read(Fixtures.VLLM_V0_AIBRIX))
        .model(QWEN_CODER).orElseThrow().waitingForCapacity()).isEmpty();
  }

  /**
   * A vLLM v0.26.0 engine (V1, one data-parallel engine) that retried the admission of a 4,096-token
   * prompt eight times under KV pressure: {@code prefix_cache_queries_total} counted it nine times
   * (vLLM before PR #48860), {@code prompt_tokens_by_source_total} once. Written as
   * {@code vllm/v1/metrics/loggers.py} registers the families (labels {@code model_name},
   * {@code engine}, then {@code source}) and its multiprocess collector prints them: labels sorted,
   * {@code _total} and {@code _created} samples, float values.
   */
  private static final String VLLM_RETRIED_PREFILL = """
      # HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.
      # TYPE vllm:prefix_cache_queries_total counter
      vllm:prefix_cache_queries_total{engine="0",model_name="Qwen/Qwen3-0.6B"} 40960.0
      # HELP vllm:prefix_cache_queries_created Prefix cache queries, in terms of number of queried tokens.
      # TYPE vllm:prefix_cache_queries_created gauge
      vllm:prefix_cache_queries_created{engine="0",model_name="Qwen/Qwen3-0.6B"} 1.7859669528940387e+09
      # HELP vllm:prefix_cache_hits_total Prefix cache hits, in terms of number of cached tokens.
      # TYPE vllm:prefix_cache_hits_total counter
      vllm:prefix_cache_hits_total{engine="0",model_name="Qwen/Qwen3-0.6B"} 3072.0
      # HELP vllm:prefix_cache_hits_created Prefix cache hits, in terms of number of cached tokens.
      # TYPE vllm:prefix_cache_hits_created gauge
      vllm:prefix_cache_hits_created{engine="0",model_name="Qwen/Qwen3-0.6B"} 1.7859669528940508e+09
      # HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.
      # TYPE vllm:num_preemptions_total counter
      vllm:num_preemptions_total{engine="0",model_name="Qwen/Qwen3-0.6B"} 2.0
      # HELP vllm:num_preemptions_created Cumulative number of preemption from the engine.
      # TYPE vllm:num_preemptions_created gauge
      vllm:num_preemptions_created{engine="0",model_name="Qwen/Qwen3-0.6B"} 1.7859669528940618e+09
      # HELP vllm:prompt_tokens_total Number of prefill tokens processed.
      # TYPE vllm:prompt_tokens_total counter
      vllm:prompt_tokens_total{engine="0",model_name="Qwen/Qwen3-0.6B"} 8192.0
      # HELP vllm:prompt_tokens_created Number of prefill tokens processed.
      # TYPE vllm:prompt_tokens_created gauge
      vllm:prompt_tokens_created{engine="0",model_name="Qwen/Qwen3-0.6B"} 1.7859669528940728e+09
      # HELP vllm:prompt_tokens_by_source_total Number of prompt tokens by source.
      # TYPE vllm:prompt_tokens_by_source_total counter
      vllm:prompt_tokens_by_source_total{engine="0",model_name="Qwen/Qwen3-0.6B",source="local_compute"} 5120.0
      vllm:prompt_tokens_by_source_total{engine="0",model_name="Qwen/Qwen3-0.6B",source="local_cache_hit"} 3072.0
      vllm:prompt_tokens_by_source_total{engine="0",model_name="Qwen/Qwen3-0.6B",source="external_kv_transfer"} 0.0
      # HELP vllm:prompt_tokens_by_source_created Number of prompt tokens by source.
      # TYPE vllm:prompt_tokens_by_source_created gauge
      vllm:prompt_tokens_by_source_created{engine="0",model_name="Qwen/Qwen3-0.6B",source="local_compute"} 1.7859669528940837e+09
      vllm:prompt_tokens_by_source_created{engine="0",model_name="Qwen/Qwen3-0.6B",source="local_cache_hit"} 1.7859669528940847e+09
      vllm:prompt_tokens_by_source_created{engine="0",model_name="Qwen/Qwen3-0.6B",source="external_kv_transfer"} 1.7859669528940856e+09
      # HELP vllm:generation_tokens_total Number of generation tokens processed.
      # TYPE vllm:generation_tokens_total counter
      vllm:generation_tokens_total{engine="0",model_name="Qwen/Qwen3-0.6B"} 1000.0
      # HELP vllm:generation_tokens_created Number of generation tokens processed.
      # TYPE vllm:generation_tokens_created gauge
      vllm:generation_tokens_created{engine="0",model_name="Qwen/Qwen3-0.6B"} 1.7859669528940966e+09
      """;

  @Test
  void promptTokensBySourceCountTheKvWrittenOnceWhereThePrefixCounterCountedRetries() {
    EngineMetrics m = EngineMetrics.parseStrict(VLLM_RETRIED_PREFILL);

    ModelMetrics model = m.model(QWEN3).orElseThrow();
    assertThat(model.promptTokensComputed()).hasValue(5120.0);
    assertThat(model.promptTokensCacheHit()).hasValue(3072.0);
    assertThat(model.promptTokensTransferred()).hasValue(0.0);
    assertThat(model.promptTokens()).hasValue(8192.0);
    // Prefilled prompt tokens and generated ones: 5,120 + 1,000.
    assertThat(model.load().kvWrittenTokens()).isEqualTo(6120);
    assertThat(m.anomalies()).isZero();

    // Without the family, queries − hits stands in: 8 retries × 4,096 misses too many.
    String older = Arrays.stream(VLLM_RETRIED_PREFILL.split("\n"))
        .filter(l -> !l.contains("prompt_tokens_by_source"))
        .collect(Collectors.joining("\n"));
    assertThat(EngineMetrics.parseStrict(older).model(QWEN3).orElseThrow().load()
        .kvWrittenTokens()).isEqualTo(40960 - 3072 + 1000).isEqualTo(6120 + 8 * 4096);
  }

  @Test
  void kvLoadedByAConnectorIsWrittenToo() {
    // A P/D decode instance: its prompts arrive by KV transfer, none is computed there.
    String decode = VLLM_RETRIED_PREFILL
        .replace("source=\"local_compute\"} 5120.0", "source=\"local_compute\"} 0.0")
        .replace("source=\"local_cache_hit\"} 3072.0", "source=\"local_cache_hit\"} 16272.0")
        .replace("source=\"external_kv_transfer\"} 0.0", "source=\"external_kv_transfer\"} 16164.0");

    ModelMetrics model = EngineMetrics.parseStrict(decode).model(QWEN3).orElseThrow();

    assertThat(model.promptTokensTransferred()).hasValue(16164.0);
    assertThat(model.load().kvWrittenTokens()).isEqualTo(16164 + 1000);
  }

  @Test
  void preemptionsFromVllmV0AndV1AndSglangRetractions() {
    assertThat(EngineMetrics.parseStrict(Fixtures.read(Fixtures.VLLM_V0_AIBRIX))
        .model(QWEN_CODER).orElseThrow().preemptions()).hasValue(0.0);

    // Two data-parallel engines preempt separately; the model's count is their sum.
    String twoEngines = VLLM_RETRIED_PREFILL + VLLM_RETRIED_PREFILL.lines()
        .filter(l -> l.startsWith("vllm:num_preemptions_total"))
        .map(l -> l.replace("engine=\"0\"", "engine=\"1\"").replace("} 2.0", "} 5.0"))
        .collect(Collectors.joining("\n", "", "\n"));
    assertThat(EngineMetrics.parseStrict(twoEngines).model(QWEN3).orElseThrow().preemptions())
        .hasValue(7.0);

    // SGLang v0.5.16's counter (collector.py), printed by the multiprocess collector.
    String sglang = """
        # HELP sglang:num_retracted_requests_total Total number of retracted requests.
        # TYPE sglang:num_retracted_requests_total counter
        sglang:num_retracted_requests_total{engine_type="unified",model_name="Qwen/Qwen3-0.6B",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 4.0
        """;
    assertThat(EngineMetrics.parseStrict(sglang).model(QWEN3).orElseThrow().preemptions())
        .hasValue(4.0);
  }

  /**
   * SGLang serving {@code --dp-size 2 --tp-size 2 --enable-metrics-for-all-schedulers}: each of
   * the two replicas' two tensor-parallel schedulers reports the same batch and pool. Families and
   * HELP texts of {@code python/sglang/srt/metrics/collector.py} (v0.5.16 onwards for the
   * {@code kv_*_tokens} gauges), labels as its scheduler sets them ({@code dp_rank} added under
   * data parallelism) and as the multiprocess collector prints them, sorted, as in the v0.5.16
   * capture.
   */
  private static String sglangTp2Dp2() {
    StringBuilder sb = new StringBuilder();
    family(sb, "num_running_reqs", "The number of running requests.", "10.0", "6.0");
    family(sb, "num_queue_reqs", "The number of requests in the waiting queue.", "3.0", "1.0");
    family(sb, "max_total_num_tokens", "Maximum total number of tokens in the KV cache pool.",
        "200000.0", "200000.0");
    family(sb, "kv_used_tokens", "Number of actively used token slots in the KV cache pool.",
        "60000.0", "40000.0");
    family(sb, "kv_available_tokens", "Number of free token slots in the KV cache pool.",
        "110000.0", "150000.0");
    family(sb, "kv_evictable_tokens",
        "Number of evictable (radix-cached) token slots in the KV cache pool.", "30000.0",
        "10000.0");
    family(sb, "token_usage", "The token usage.", "0.25", "0.1");
    family(sb, "gen_throughput", "The generation throughput (token/s).", "400.5", "250.25");
    family(sb, "page_size", "KV cache page size in tokens.", "1.0", "1.0");
    return sb.toString();
  }

  private static void family(StringBuilder sb, String name, String help, String dp0, String dp1) {
    sb.append("# HELP sglang:").append(name).append(' ').append(help).append('\n');
    sb.append("# TYPE sglang:").append(name).append(" gauge\n");
    for (int dp = 0; dp < 2; dp++) {
      for (int tp = 0; tp < 2; tp++) {
        sb.append("sglang:").append(name).append("{dp_rank=\"").append(dp)
            .append("\",engine_type=\"unified\",model_name=\"Qwen/Qwen3-0.6B\",moe_ep_rank=\"0\","
                + "pp_rank=\"0\",tp_rank=\"").append(tp).append("\"} ")
            .append(dp == 0 ? dp0 : dp1).append('\n');
      }
    }
  }

  @Test
  void sglangTensorParallelRanksCountOnceAndDataParallelRanksAdd() {
    String text = sglangTp2Dp2();
    assertThat(text.lines().filter(l -> l.startsWith("sglang:num_running_reqs{")).count())
        .as("four schedulers report").isEqualTo(4);

    EngineMetrics m = EngineMetrics.parseStrict(text);

    ModelMetrics model = m.model(QWEN3).orElseThrow();
    assertThat(model.load()).isEqualTo(ReplicaLoad.builder()
        .runningRequests(10 + 6).waitingRequests(3 + 1)
        .kvCapacityTokens(2 * 200_000).kvUsage((60_000 + 40_000) / 400_000.0)
        .outputTokensPerSecond(400.5 + 250.25).build());
    assertThat(model.kvUsedTokens()).hasValue(100_000);
    assertThat(model.kvAvailableTokens()).hasValue(260_000);
    assertThat(model.kvEvictableTokens()).hasValue(40_000);
    assertThat(model.load().kvFreeTokens()).as("free and evictable").isEqualTo(300_000);
    assertThat(model.kvBlockSize()).hasValue(1);
    assertThat(m.anomalies()).as("rank copies are no anomaly").isZero();
  }

  @Test
  void underDpAttentionEachDataParallelRankKeepsItsLowestTensorRank() {
    // With --enable-dp-attention, tp_rank runs over the whole group: dp_rank 1 holds ranks 2 and 3.
    String text = sglangTp2Dp2()
        .replace("dp_rank=\"1\",engine_type=\"unified\",model_name=\"Qwen/Qwen3-0.6B\","
            + "moe_ep_rank=\"0\",pp_rank=\"0\",tp_rank=\"1\"",
            "dp_rank=\"1\",engine_type=\"unified\",model_name=\"Qwen/Qwen3-0.6B\","
            + "moe_ep_rank=\"1\",pp_rank=\"0\",tp_rank=\"3\"")
        .replace("dp_rank=\"1\",engine_type=\"unified\",model_name=\"Qwen/Qwen3-0.6B\","
            + "moe_ep_rank=\"0\",pp_rank=\"0\",tp_rank=\"0\"",
            "dp_rank=\"1\",engine_type=\"unified\",model_name=\"Qwen/Qwen3-0.6B\","
            + "moe_ep_rank=\"0\",pp_rank=\"0\",tp_rank=\"2\"");

    ReplicaLoad load = EngineMetrics.parseStrict(text).model(QWEN3).orElseThrow().load();

    assertThat(load.runningRequests()).isEqualTo(16);
    assertThat(load.waitingRequests()).isEqualTo(4);
    assertThat(load.kvCapacityTokens()).isEqualTo(400_000);
  }

  @Test
  void sglangTensorRanksWithoutDataParallelismAreOneReplica() {
    // --tp-size 12 --enable-metrics-for-all-schedulers, no dp_rank label; of its copies, ranks 10
    // and 2 are here, and rank 2's is read (numerically lower, though "10" sorts first as text).
    String rank1 = Arrays.stream(sglangTp2Dp2().split("\n"))
        .filter(l -> !l.contains("dp_rank=\"1\"") && !l.contains("tp_rank=\"0\""))
        .map(l -> l.replace("dp_rank=\"0\",", ""))
        .collect(Collectors.joining("\n", "", "\n"));
    String text = rank1.replace("tp_rank=\"1\"", "tp_rank=\"10\"")
            .replace("tp_rank=\"10\"} 10.0", "tp_rank=\"10\"} 99.0")
        + rank1.lines().filter(l -> l.startsWith("sglang:"))
            .map(l -> l.replace("tp_rank=\"1\"", "tp_rank=\"2\""))
            .collect(Collectors.joining("\n", "", "\n"));
    assertThat(text).contains("tp_rank=\"10\"} 99.0");

    ReplicaLoad load = EngineMetrics.parseStrict(text).model(QWEN3).orElseThrow().load();

    assertThat(load.runningRequests()).isEqualTo(10);
    assertThat(load.kvCapacityTokens()).isEqualTo(200_000);
    assertThat(load.kvUsage()).hasValue(0.3);
  }

  /**
   * A hybrid sliding-window model on SGLang (families and HELP texts of collector.py): the SWA
   * pool is nearly full, the full-attention pool that {@code max_total_num_tokens} measures is not.
   * {@code token_usage} is the larger of the two ({@code max(full_token_usage, swa_token_usage)} in
   * {@code python/sglang/srt/managers/scheduler_metrics_mixin.py}).
   */
  private static final String SGLANG_HYBRID_SWA = """
      # HELP sglang:max_total_num_tokens Maximum total number of tokens in the KV cache pool.
      # TYPE sglang:max_total_num_tokens gauge
      sglang:max_total_num_tokens{engine_type="unified",model_name="openai/gpt-oss-20b",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 400000.0
      # HELP sglang:token_usage The token usage.
      # TYPE sglang:token_usage gauge
      sglang:token_usage{engine_type="unified",model_name="openai/gpt-oss-20b",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 0.92
      # HELP sglang:full_token_usage The token usage for full attention layers.
      # TYPE sglang:full_token_usage gauge
      sglang:full_token_usage{engine_type="unified",model_name="openai/gpt-oss-20b",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 0.3
      # HELP sglang:swa_token_usage The token usage for SWA layers.
      # TYPE sglang:swa_token_usage gauge
      sglang:swa_token_usage{engine_type="unified",model_name="openai/gpt-oss-20b",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 0.92
      """;

  private static final String SGLANG_HYBRID_KV_SLOTS = """
      # HELP sglang:kv_used_tokens Number of actively used token slots in the KV cache pool.
      # TYPE sglang:kv_used_tokens gauge
      sglang:kv_used_tokens{engine_type="unified",model_name="openai/gpt-oss-20b",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 100000.0
      # HELP sglang:kv_available_tokens Number of free token slots in the KV cache pool.
      # TYPE sglang:kv_available_tokens gauge
      sglang:kv_available_tokens{engine_type="unified",model_name="openai/gpt-oss-20b",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 220000.0
      # HELP sglang:kv_evictable_tokens Number of evictable (radix-cached) token slots in the KV cache pool.
      # TYPE sglang:kv_evictable_tokens gauge
      sglang:kv_evictable_tokens{engine_type="unified",model_name="openai/gpt-oss-20b",moe_ep_rank="0",pp_rank="0",tp_rank="0"} 80000.0
      """;

  @Test
  void hybridModelsUsageIsTheFullAttentionPoolsNotTheLargestPools() {
    ReplicaLoad ratios = EngineMetrics.parseStrict(SGLANG_HYBRID_SWA).model("openai/gpt-oss-20b")
        .orElseThrow().load();
    assertThat(ratios.kvUsage()).as("full_token_usage, not token_usage 0.92").hasValue(0.3);
    assertThat(ratios.kvFreeTokens()).isEqualTo(280_000);

    ReplicaLoad slots = EngineMetrics.parseStrict(SGLANG_HYBRID_SWA + SGLANG_HYBRID_KV_SLOTS)
        .model("openai/gpt-oss-20b").orElseThrow().load();
    assertThat(slots.kvUsage()).as("kv_used_tokens over the pool").hasValue(0.25);
    assertThat(slots.kvCapacityTokens()).isEqualTo(400_000);
    assertThat(slots.kvFreeTokens()).isEqualTo(300_000);

    // No max_total_num_tokens: the pool is its active, free and evictable slots.
    ReplicaLoad derived = EngineMetrics.parseStrict(SGLANG_HYBRID_KV_SLOTS
        + SGLANG_HYBRID_SWA.lines().filter(l -> !l.contains("max_total_num_tokens"))
        .collect(Collectors.joining("\n", "", "\n")))
        .model("openai/gpt-oss-20b").orElseThrow().load();
    assertThat(derived.kvCapacityTokens()).isEqualTo(400_000);
    assertThat(derived.kvUsage()).hasValue(0.25);
  }

  @Test
  void sglang0516CaptureReadsItsFullAttentionUsage() {
    ModelMetrics model = EngineMetrics.parseStrict(Fixtures.read(Fixtures.SGLANG_HICACHE))
        .model(QWEN3).orElseThrow();

    assertThat(model.load().kvUsage()).hasValue(0.0);
    assertThat(model.kvUsedTokens()).as("not in this capture").isEmpty();
    assertThat(model.preemptions()).isEmpty();
  }

  @Test
  void badValuesOfTheNewFamiliesAreSkippedOrClampedAndCounted() {
    String sglang = "sglang:max_total_num_tokens{model_name=\"s\",tp_rank=\"0\"} 1000\n"
        + "sglang:kv_used_tokens{model_name=\"s\",tp_rank=\"0\"} 1500\n" // more than the pool
        + "sglang:kv_available_tokens{model_name=\"s\",tp_rank=\"0\"} -3\n"
        + "sglang:kv_evictable_tokens{model_name=\"s\",tp_rank=\"0\"} NaN\n"
        + "sglang:num_queue_reqs{model_name=\"s\",tp_rank=\"0\"} 2\n"
        + "sglang:num_queue_reqs{model_name=\"s\",tp_rank=\"0\"} 2\n"; // the same series again
    String vllm = "vllm:num_requests_waiting_by_reason{model_name=\"v\",reason=\"capacity\"} NaN\n"
        + "vllm:num_requests_waiting_by_reason{model_name=\"v\",reason=\"deferred\"} 1.5\n"
        + "vllm:num_requests_waiting_by_reason{model_name=\"v\",reason=\"someday\"} 4\n"
        + "vllm:prompt_tokens_by_source_total{model_name=\"v\",source=\"local_compute\"} -5\n"
        + "vllm:prefix_cache_queries_total{model_name=\"v\"} 100\n"
        + "vllm:prefix_cache_hits_total{model_name=\"v\"} 40\n"
        + "vllm:generation_tokens_total{model_name=\"v\"} 10\n"
        + "vllm:num_preemptions_total{model_name=\"v\"} -Inf\n";

    EngineMetrics m = EngineMetrics.parseStrict(sglang + vllm);

    ModelMetrics s = m.model("s").orElseThrow();
    assertThat(s.load().kvUsage()).as("clamped").hasValue(1.0);
    assertThat(s.load().waitingRequests()).as("counted once").isEqualTo(2);
    assertThat(s.kvAvailableTokens()).isEmpty();
    assertThat(s.kvEvictableTokens()).isEmpty();
    ModelMetrics v = m.model("v").orElseThrow();
    assertThat(v.waitingForCapacity()).isEmpty();
    assertThat(v.waitingDeferred()).as("rounded").hasValue(2);
    assertThat(v.promptTokensComputed()).isEmpty();
    assertThat(v.load().kvWrittenTokens()).as("the fallback").isEqualTo(100 - 40 + 10);
    assertThat(v.preemptions()).isEmpty();
    // 1500 over 1000, -3, NaN, the repeat, NaN, 1.5 rounded, -5, -Inf; an unknown reason is none
    assertThat(m.anomalies()).isEqualTo(8);
  }
}
