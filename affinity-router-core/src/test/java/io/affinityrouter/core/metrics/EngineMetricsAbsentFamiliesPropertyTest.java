package io.affinityrouter.core.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.doubles;
import static org.quicktheories.generators.SourceDSL.integers;

import io.affinityrouter.ReplicaLoad;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The families read beyond the load gauges only ever refine the load: where a scrape lacks them,
 * the load is what the gauges and counters alone give, and the informational ones never move it.
 */
class EngineMetricsAbsentFamiliesPropertyTest {
  private static final int EXAMPLES = 500;
  private static final String LABELS = "{engine=\"0\",model_name=\"m\"}";
  private static final String SGLANG_LABELS =
      "{engine_type=\"unified\",model_name=\"m\",moe_ep_rank=\"0\",pp_rank=\"0\",tp_rank=\"0\"}";

  /** Every family added for today's engines, by sample name. */
  private static final List<String> NEW_FAMILIES = List.of("vllm:num_requests_waiting_by_reason",
      "vllm:prompt_tokens_by_source_total", "vllm:num_preemptions_total",
      "sglang:full_token_usage", "sglang:kv_used_tokens", "sglang:kv_available_tokens",
      "sglang:kv_evictable_tokens", "sglang:num_retracted_requests_total");

  @Test
  void theFixturesLoadsDoNotDependOnTheNewFamilies() {
    for (String fixture : Fixtures.EXPOSITIONS) {
      String text = Fixtures.read(fixture);
      String without = Arrays.stream(text.split("\n"))
          .filter(l -> NEW_FAMILIES.stream().noneMatch(l::contains))
          .collect(Collectors.joining("\n", "", "\n"));

      EngineMetrics with = EngineMetrics.parseStrict(text);
      EngineMetrics old = EngineMetrics.parseStrict(without);

      assertThat(with.loads()).as(fixture).isEqualTo(old.loads());
      assertThat(with.anomalies()).as(fixture).isEqualTo(old.anomalies());
    }
  }

  @Test
  void vllmWithoutTheNewFamiliesGivesTheGaugesAndTheQueriesMinusHitsEstimate() {
    AtomicInteger cases = new AtomicInteger();
    qt().withExamples(EXAMPLES).forAll(integers().between(0, 5_000), integers().between(0, 5_000),
        doubles().between(0, 1), integers().between(0, 1 << 30))
        .checkAssert((running, waiting, usage, generated) -> {
          cases.incrementAndGet();
          long queries = 7L * generated % 1_000_003;
          long hits = queries / 3;
          String text = gauge("vllm:num_requests_running", running)
              + gauge("vllm:num_requests_waiting", waiting)
              + gauge("vllm:kv_cache_usage_perc", usage)
              + counter("vllm:prefix_cache_queries_total", queries)
              + counter("vllm:prefix_cache_hits_total", hits)
              + counter("vllm:generation_tokens_total", generated);
          ReplicaLoad expected = ReplicaLoad.builder().runningRequests(running)
              .waitingRequests(waiting).kvUsage(usage)
              .kvWrittenTokens(queries - hits + generated).build();

          EngineMetrics old = EngineMetrics.parseStrict(text);
          assertThat(old.model("m").orElseThrow().load()).isEqualTo(expected);

          // The split of the waiting count and the preemption counter say more, change nothing.
          String informational = text
              + "vllm:num_requests_waiting_by_reason{engine=\"0\",model_name=\"m\","
              + "reason=\"capacity\"} " + (waiting / 2) + ".0\n"
              + "vllm:num_requests_waiting_by_reason{engine=\"0\",model_name=\"m\","
              + "reason=\"deferred\"} " + (waiting - waiting / 2) + ".0\n"
              + counter("vllm:num_preemptions_total", running / 7);
          assertThat(EngineMetrics.parseStrict(informational).model("m").orElseThrow().load())
              .isEqualTo(expected);
        });
    assertThat(cases.get()).isGreaterThanOrEqualTo(EXAMPLES * 4 / 5);
  }

  @Test
  void sglangWithoutTheNewFamiliesGivesTokenUsageOverItsCapacity() {
    AtomicInteger cases = new AtomicInteger();
    qt().withExamples(EXAMPLES).forAll(integers().between(0, 5_000), integers().between(0, 5_000),
        doubles().between(0, 1), integers().between(1, 1 << 24))
        .checkAssert((running, queued, usage, capacity) -> {
          cases.incrementAndGet();
          String text = sglang("num_running_reqs", running) + sglang("num_queue_reqs", queued)
              + sglang("token_usage", usage) + sglang("max_total_num_tokens", capacity);

          ReplicaLoad load = EngineMetrics.parseStrict(text).model("m").orElseThrow().load();

          assertThat(load).isEqualTo(ReplicaLoad.builder().runningRequests(running)
              .waitingRequests(queued).kvUsage(usage).kvCapacityTokens(capacity).build());
          assertThat(EngineMetrics.parseStrict(text
              + sglang("num_retracted_requests_total", running)).model("m").orElseThrow().load())
              .as("retractions are informational").isEqualTo(load);
        });
    assertThat(cases.get()).isGreaterThanOrEqualTo(EXAMPLES * 4 / 5);
  }

  private static String gauge(String name, double value) {
    return name + LABELS + " " + value + "\n";
  }

  private static String counter(String name, long value) {
    return name + LABELS + " " + (double) value + "\n";
  }

  private static String sglang(String name, double value) {
    return "sglang:" + name + SGLANG_LABELS + " " + value + "\n";
  }
}
