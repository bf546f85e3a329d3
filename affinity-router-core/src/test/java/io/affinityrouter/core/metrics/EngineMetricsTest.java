package io.affinityrouter.core.metrics;

import io.affinityrouter.ModelState;
import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.spi.ReplicaEndpoint.Engine;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EngineMetricsTest {
  private static final String QWEN_CODER = "Qwen/Qwen2.5-Coder-1.5B-Instruct";
  private static final String QWEN3 = "Qwen/Qwen3-0.6B";
  private static final String LLAMA = "meta-llama/Llama-3.1-8B-Instruct";

  @Test
  void vllmV0CaptureFromAibrix() {
    EngineMetrics m = EngineMetrics.parseStrict(Fixtures.read(Fixtures.VLLM_V0_AIBRIX));

    assertThat(m.engine()).isEqualTo(Engine.VLLM);
    assertThat(m.models()).containsOnlyKeys(QWEN_CODER);
    ModelMetrics model = m.models().get(QWEN_CODER);
    assertThat(model.load()).isEqualTo(ReplicaLoad.builder()
        .runningRequests(0).waitingRequests(0).kvUsage(0.0) // gpu_cache_usage_perc (V0 name)
        .kvCapacityTokens(16L * 81767) // block_size × num_gpu_blocks, no kv_cache_size_tokens
        .build());
    assertThat(model.kvBlockSize()).hasValue(16);
    assertThat(model.generationTokens()).hasValue(955.0);
    assertThat(model.promptTokens()).hasValue(148.0);
    assertThat(model.prefixCacheQueries()).isEmpty();
    assertThat(model.prefixCacheHits()).isEmpty();
    assertThat(model.prefixCacheHitRate()).as("-1 means no lookups yet").isEmpty();
    assertThat(model.state()).isEqualTo(ModelState.ACTIVE);
    assertThat(m.runningLoraAdapters()).isEmpty();
    assertThat(m.waitingLoraAdapters()).isEmpty();
    assertThat(m.anomalies()).isZero();
    assertThat(m.skippedLines()).isZero();
    assertThat(m.replicaLoad()).isEqualTo(model.load());
  }

  @Test
  void vllmV1CaptureFromLlmdRouter() {
    EngineMetrics m = EngineMetrics.parseStrict(Fixtures.read(Fixtures.VLLM_V1_LLMD));

    assertThat(m.engine()).isEqualTo(Engine.VLLM);
    assertThat(m.models()).containsOnlyKeys(QWEN3);
    ModelMetrics model = m.models().get(QWEN3);
    assertThat(model.load().kvCapacityTokens())
        .isEqualTo(1_188_352L) // kv_cache_size_tokens
        .isEqualTo(16L * 74272); // block_size × num_gpu_blocks agrees
    assertThat(model.load().kvUsage()).hasValue(0.0);
    assertThat(model.load().kvFreeTokens()).isEqualTo(1_188_352L);
    assertThat(model.load().waitingRequests()).isZero();
    assertThat(model.load().runningRequests()).as("trimmed from this capture").isZero();
    assertThat(model.kvBlockSize()).hasValue(16);
    assertThat(model.generationTokens()).as("trimmed from this capture").isEmpty();
    assertThat(model.prefixCacheQueries()).as("external_* is not the local cache").isEmpty();
    assertThat(m.anomalies()).isZero();
  }

  @Test
  void sglangDocsExampleUnderLoad() {
    EngineMetrics m = EngineMetrics.parseStrict(Fixtures.read(Fixtures.SGLANG_DOCS));

    assertThat(m.engine()).isEqualTo(Engine.SGLANG);
    assertThat(m.models()).containsOnlyKeys(LLAMA);
    ModelMetrics model = m.models().get(LLAMA);
    assertThat(model.load()).isEqualTo(ReplicaLoad.builder()
        .runningRequests(162).waitingRequests(2826).kvUsage(0.28)
        .outputTokensPerSecond(86.50814177726902).build());
    assertThat(model.load().kvFreeTokens()).as("capacity not in this example").isEqualTo(-1);
    assertThat(model.prefixCacheHitRate()).hasValue(0.007507552643049313);
    assertThat(model.generationTokens()).hasValue(7_557_572.0);
    assertThat(model.promptTokens()).hasValue(8_128_902.0);
    assertThat(model.kvBlockSize()).isEmpty();
    assertThat(model.state()).isEqualTo(ModelState.ACTIVE);
    assertThat(m.anomalies()).isZero();
  }

  @Test
  void sglang0516HicacheCapture() {
    EngineMetrics m = EngineMetrics.parseStrict(Fixtures.read(Fixtures.SGLANG_HICACHE));

    assertThat(m.engine()).isEqualTo(Engine.SGLANG);
    ModelMetrics model = m.model(QWEN3).orElseThrow();
    assertThat(model.load()).isEqualTo(ReplicaLoad.builder()
        .waitingRequests(0).kvUsage(0.0).kvCapacityTokens(200_000).build());
    assertThat(model.kvBlockSize()).hasValue(1);
    assertThat(model.outputRateFromEngine()).isFalse();
    assertThat(m.anomalies()).isZero();
  }

  @Test
  void sglangUnderscorePrefixReadsTheSameAsColon() {
    String colon = Fixtures.read(Fixtures.SGLANG_DOCS);
    String underscore = colon.replace("sglang:", "sglang_");

    assertThat(underscore).doesNotContain("sglang:");
    assertThat(EngineMetrics.parseStrict(underscore))
        .isEqualTo(EngineMetrics.parseStrict(colon));
  }

  @Test
  void everyCurrentVllmFamilyReadExistsInV0_26_0AndTheOlderNamesDoNot() {
    Set<String> v0260 = Arrays.stream(Fixtures.read(Fixtures.VLLM_V0_26_FAMILIES).split("\n"))
        .filter(l -> !l.startsWith("#") && !l.isBlank())
        .map(l -> l.split(" ")[0])
        .collect(Collectors.toSet());
    assertThat(v0260).hasSize(36);

    // vLLM registers lora_requests_info only when LoRA is enabled; this capture ran without it.
    Set<String> conditional = Set.of("vllm:lora_requests_info");
    EngineFamilies.BY_SAMPLE_NAME.forEach((name, family) -> {
      // vllm_ names are the same families as OpenMetrics exporters write them
      String canonical = name.startsWith("vllm_") ? "vllm:" + name.substring(5) : name;
      if (family.kind() == Engine.VLLM && !conditional.contains(canonical)) {
        assertThat(v0260.contains(canonical)).as(name).isEqualTo(!family.legacy());
        assertThat(EngineFamilies.of(canonical)).as(name).isEqualTo(family);
      }
    });
    assertThat(v0260).doesNotContainAnyElementsOf(conditional);
  }

  @Test
  void sumsDataParallelEnginesOfOneModel() {
    // The real V1 capture plus a second data-parallel engine: its lines with engine="1".
    String engine0 = Fixtures.read(Fixtures.VLLM_V1_LLMD);
    String engine1 = Arrays.stream(engine0.split("\n"))
        .filter(l -> !l.startsWith("#"))
        .map(l -> l.replace("engine=\"0\"", "engine=\"1\""))
        .collect(Collectors.joining("\n"));
    String counters = "vllm:num_requests_running{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\"} 3\n"
        + "vllm:num_requests_running{engine=\"1\",model_name=\"Qwen/Qwen3-0.6B\"} 4\n"
        + "vllm:generation_tokens_total{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\"} 100\n"
        + "vllm:generation_tokens_total{engine=\"1\",model_name=\"Qwen/Qwen3-0.6B\"} 50\n"
        + "vllm:prefix_cache_queries_total{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\"} 64\n"
        + "vllm:prefix_cache_hits_total{engine=\"1\",model_name=\"Qwen/Qwen3-0.6B\"} 32\n";

    engine1 = engine1
        .replace("vllm:num_requests_waiting{engine=\"1\",model_name=\"Qwen/Qwen3-0.6B\"} 0.0",
            "vllm:num_requests_waiting{engine=\"1\",model_name=\"Qwen/Qwen3-0.6B\"} 2.0")
        .replace("vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"Qwen/Qwen3-0.6B\"} 0.0",
            "vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"Qwen/Qwen3-0.6B\"} 0.5");

    EngineMetrics m = EngineMetrics.parseStrict(engine0 + engine1 + "\n" + counters);

    ModelMetrics model = m.model(QWEN3).orElseThrow();
    assertThat(model.load().kvCapacityTokens()).isEqualTo(2 * 1_188_352L);
    assertThat(model.load().kvUsage()).hasValue(0.25); // mean of 0.0 and 0.5
    assertThat(model.load().runningRequests()).isEqualTo(7);
    assertThat(model.load().waitingRequests()).isEqualTo(2);
    assertThat(model.generationTokens()).hasValue(150.0);
    assertThat(model.prefixCacheQueries()).hasValue(64.0);
    assertThat(model.prefixCacheHits()).hasValue(32.0);
    // Tokens written to the KV cache: the 64 - 32 prompt tokens not served from it, and 150 output.
    assertThat(model.load().kvWrittenTokens()).isEqualTo(182);
    assertThat(model.kvBlockSize()).hasValue(16);
    assertThat(m.anomalies()).isZero();
  }

  @Test
  void sleepStateFollowsVllmsAwakeAndSleepLevelSeries() {
    String awake = sleepState(1, 0, 0);
    String level1 = sleepState(0, 1, 0);
    String level2 = sleepState(0, 0, 1);

    assertThat(EngineMetrics.parseStrict(awake).modelStates()).containsExactly(
        Map.entry(QWEN3, ModelState.ACTIVE));
    assertThat(EngineMetrics.parseStrict(level1).modelStates()).containsExactly(
        Map.entry(QWEN3, ModelState.SLEEPING));
    assertThat(EngineMetrics.parseStrict(level2).model(QWEN3).orElseThrow().state())
        .isEqualTo(ModelState.SLEEPING);
    // One of two data-parallel engines asleep: requests could land on it, so the model sleeps.
    assertThat(EngineMetrics.parseStrict(awake + level1.replace("engine=\"0\"", "engine=\"1\""))
        .model(QWEN3).orElseThrow().state()).isEqualTo(ModelState.SLEEPING);
  }

  private static String sleepState(int awake, int weightsOffloaded, int discardAll) {
    String labels = "{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\",sleep_state=";
    return "# TYPE vllm:engine_sleep_state gauge\n"
        + "vllm:engine_sleep_state" + labels + "\"awake\"} " + awake + ".0\n"
        + "vllm:engine_sleep_state" + labels + "\"weights_offloaded\"} " + weightsOffloaded + ".0\n"
        + "vllm:engine_sleep_state" + labels + "\"discard_all\"} " + discardAll + ".0\n";
  }

  @Test
  void badValuesAreSkippedOrClampedAndCountedNeverThrown() {
    String text = "vllm:num_requests_running{model_name=\"m\"} NaN\n"
        + "vllm:num_requests_waiting{model_name=\"m\"} -3\n"
        + "vllm:kv_cache_usage_perc{model_name=\"m\"} 1.5\n"
        + "vllm:generation_tokens_total{model_name=\"m\"} +Inf\n"
        + "vllm:prompt_tokens_total{model_name=\"m\"} -1\n"
        + "vllm:prefix_cache_queries_total{model_name=\"m\"} 10\n"
        + "vllm:prefix_cache_queries_total{model_name=\"m\"} 10\n" // the same series again
        + "vllm:num_requests_running{model_name=\"n\"} 2.5\n"
        + "vllm:num_requests_waiting{model_name=\"n\"} 1e12\n"
        + "vllm:engine_sleep_state{model_name=\"n\",sleep_state=\"awake\"} NaN\n"
        + "vllm:cache_config_info{block_size=\"sixteen\",num_gpu_blocks=\"-4\"} 1\n";

    EngineMetrics m = EngineMetrics.parseStrict(text);

    ModelMetrics bad = m.model("m").orElseThrow();
    assertThat(bad.load()).isEqualTo(ReplicaLoad.builder().kvUsage(1.0).build());
    assertThat(bad.generationTokens()).isEmpty();
    assertThat(bad.promptTokens()).isEmpty();
    assertThat(bad.prefixCacheQueries()).hasValue(10.0);
    ModelMetrics odd = m.model("n").orElseThrow();
    assertThat(odd.load().runningRequests()).isEqualTo(2);
    assertThat(odd.load().waitingRequests()).isEqualTo(Integer.MAX_VALUE);
    assertThat(odd.load().kvCapacityTokens()).isZero();
    assertThat(odd.state()).isEqualTo(ModelState.ACTIVE);
    // NaN, -3, 1.5, +Inf, -1, repeat, 2.5, 1e12 saturated, NaN sleep, two bad config labels
    assertThat(m.anomalies()).isEqualTo(11);
  }

  @Test
  void lenientParseCountsSkippedLinesStrictRefusesThem() {
    String text = Fixtures.read(Fixtures.SGLANG_DOCS)
        .replace("sglang:num_queue_reqs{model_name=", "sglang:num_queue_reqs{model_name ")
        .replace("# HELP sglang:token_usage The token usage", "# TYPE sglang:token_usage gaug");

    EngineMetrics lenient = EngineMetrics.parse(text);

    assertThat(lenient.skippedLines()).isEqualTo(2);
    assertThat(lenient.model(LLAMA).orElseThrow().load().waitingRequests())
        .as("the queue line was the bad one").isZero();
    assertThat(lenient.model(LLAMA).orElseThrow().load().runningRequests()).isEqualTo(162);
    assertThatThrownBy(() -> EngineMetrics.parseStrict(text))
        .isExactlyInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("line 7, column 27: 'gaug'");
  }

  @Test
  void samplesWithoutModelNameGoUnderNoModelAndStayOutOfModelStates() {
    EngineMetrics m = EngineMetrics.parseStrict("vllm:num_requests_running 2\n"
        + "vllm:num_requests_waiting 1\n"
        + "vllm:num_requests_running{model_name=\"a\"} 1\n");

    assertThat(m.models()).containsOnlyKeys(EngineMetrics.NO_MODEL, "a");
    assertThat(m.loads().get(EngineMetrics.NO_MODEL).inFlightRequests()).isEqualTo(3);
    assertThat(m.modelStates()).containsOnlyKeys("a");
    Replica replica = Replica.builder("pod-1").models(m.modelStates()).load(m.replicaLoad()).build();
    assertThat(replica.load().runningRequests()).isEqualTo(3);
  }

  @Test
  void sglangKvWrittenComesFromTheSchedulersRealtimeCountersOncePerDataParallelRank() {
    // The 0.5.16 capture's scheduler labels, two tensor-parallel ranks of one data-parallel rank;
    // realtime_tokens_total adds a mode label (collector.py increment_realtime_tokens).
    String labels = "engine_type=\"unified\",model_name=\"Qwen/Qwen3-0.6B\",moe_ep_rank=\"0\","
        + "pp_rank=\"0\",tp_rank=\"%d\"";
    StringBuilder text = new StringBuilder("# TYPE sglang:realtime_tokens_total counter\n");
    for (int tp = 0; tp < 2; tp++) {
      String l = String.format(labels, tp);
      text.append("sglang:num_running_reqs{").append(l).append("} 2.0\n")
          .append("sglang:realtime_tokens_total{").append(l).append(",mode=\"prefill_compute\"} 4000.0\n")
          .append("sglang:realtime_tokens_total{").append(l).append(",mode=\"prefill_cache\"} 2000.0\n")
          .append("sglang:realtime_tokens_total{").append(l).append(",mode=\"decode\"} 600.0\n");
    }
    // the tokenizer's per-request counters, which the scheduler's take precedence over
    text.append("sglang:prompt_tokens_total{model_name=\"Qwen/Qwen3-0.6B\"} 9000.0\n")
        .append("sglang:cached_tokens_total{model_name=\"Qwen/Qwen3-0.6B\"} 3000.0\n")
        .append("sglang:generation_tokens_total{model_name=\"Qwen/Qwen3-0.6B\"} 500.0\n");

    EngineMetrics m = EngineMetrics.parseStrict(text.toString());

    ModelMetrics model = m.model(QWEN3).orElseThrow();
    assertThat(model.promptTokensComputed()).hasValue(4000.0);
    assertThat(model.promptTokensCacheHit()).hasValue(2000.0);
    assertThat(model.load().kvWrittenTokens()).isEqualTo(4600);
    assertThat(m.replicaLoad().kvWrittenTokens()).as("passed on to the replica").isEqualTo(4600);
    assertThat(m.anomalies()).isZero();

    // an SGLang without the realtime counters: prompt − cached + generated
    String older = text.toString().lines().filter(l -> !l.contains("realtime_tokens_total"))
        .collect(Collectors.joining("\n"));
    assertThat(EngineMetrics.parseStrict(older).replicaLoad().kvWrittenTokens())
        .isEqualTo(9000 - 3000 + 500);
  }

  @Test
  void replicaKvWrittenSumsItsModelsOnlyWhenEachHasTheCounter() {
    String a = "vllm:generation_tokens_total{engine=\"0\",model_name=\"a\"} 100\n"
        + "vllm:prompt_tokens_by_source_total{engine=\"0\",model_name=\"a\",source=\"local_compute\"} 900\n"
        + "vllm:prompt_tokens_by_source_total{engine=\"0\",model_name=\"a\",source=\"local_cache_hit\"} 300\n";
    String b = "vllm:generation_tokens_total{engine=\"0\",model_name=\"b\"} 10\n"
        + "vllm:prompt_tokens_by_source_total{engine=\"0\",model_name=\"b\",source=\"local_compute\"} 40\n";
    assertThat(EngineMetrics.parseStrict(a + b).replicaLoad().kvWrittenTokens())
        .isEqualTo(1000 + 50);
    assertThat(EngineMetrics.parseStrict(a + "vllm:num_requests_running{engine=\"0\","
        + "model_name=\"b\"} 1\n").replicaLoad().kvWrittenTokens())
        .as("b has no counter: no sum").isEqualTo(-1);
  }

  @Test
  void replicaLoadAddsModelsAndWeighsKvUsageByCapacity() {
    String text = "sglang:num_running_reqs{model_name=\"a\"} 10\n"
        + "sglang:num_queue_reqs{model_name=\"a\"} 2\n"
        + "sglang:token_usage{model_name=\"a\"} 0.5\n"
        + "sglang:max_total_num_tokens{model_name=\"a\"} 300000\n"
        + "sglang:gen_throughput{model_name=\"a\"} 100.5\n"
        + "sglang:num_running_reqs{model_name=\"b\"} 5\n"
        + "sglang:token_usage{model_name=\"b\"} 0.1\n"
        + "sglang:max_total_num_tokens{model_name=\"b\"} 100000\n"
        + "sglang:gen_throughput{model_name=\"b\"} 50\n";

    EngineMetrics m = EngineMetrics.parseStrict(text);

    assertThat(m.replicaLoad()).isEqualTo(ReplicaLoad.builder().runningRequests(15)
        .waitingRequests(2).kvCapacityTokens(400_000).outputTokensPerSecond(150.5)
        .kvUsage((0.5 * 300_000 + 0.1 * 100_000) / 400_000).build());
    // Without b's capacity the usages cannot be weighed: plain mean.
    EngineMetrics unweighed = EngineMetrics.parseStrict(
        text.replace("sglang:max_total_num_tokens{model_name=\"b\"} 100000\n", ""));
    assertThat(unweighed.replicaLoad().kvUsage()).hasValue(0.3);
  }

  @Test
  void newestLoraInfoGivesTheAdapters() {
    String text = "vllm:lora_requests_info{max_lora=\"4\",running_lora_adapters=\"old\","
        + "waiting_lora_adapters=\"\"} 1.7382173358407154e+09\n"
        + "vllm:lora_requests_info{max_lora=\"4\",running_lora_adapters=\"sql-lora,chat-lora\","
        + "waiting_lora_adapters=\"tiny\"} 1.7382173999e+09\n"
        + "vllm:num_requests_running{model_name=\"base\"} 1\n";

    EngineMetrics m = EngineMetrics.parseStrict(text);

    assertThat(m.runningLoraAdapters()).containsExactlyInAnyOrder("sql-lora", "chat-lora");
    assertThat(m.waitingLoraAdapters()).containsExactly("tiny");
    assertThat(m.models()).containsOnlyKeys("base");
  }

  @Test
  void engineIsUnknownWithoutEngineFamiliesOrWithBoth() {
    assertThat(EngineMetrics.parse("").engine()).isEqualTo(Engine.UNKNOWN);
    assertThat(EngineMetrics.parse("").replicaLoad()).isSameAs(ReplicaLoad.UNKNOWN);
    assertThat(EngineMetrics.parse("process_open_fds 12").engine())
        .isEqualTo(Engine.UNKNOWN);
    assertThat(EngineMetrics.parse("vllm:num_requests_running 1\nsglang:num_queue_reqs 1")
        .engine()).isEqualTo(Engine.UNKNOWN);
  }
}
