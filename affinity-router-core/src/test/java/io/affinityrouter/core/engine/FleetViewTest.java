package io.affinityrouter.core.engine;

import static io.affinityrouter.core.engine.EngineServer.fixture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.ModelState;
import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.core.metrics.EngineMetrics;
import io.affinityrouter.spi.ReplicaEndpoint;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Snapshots built from real scrapes of the captured vLLM and SGLang expositions. */
class FleetViewTest {
  private final EngineServer vllm = new EngineServer().metrics(fixture(EngineServer.VLLM_V1));
  private final EngineServer sglang = new EngineServer().metrics(fixture(EngineServer.SGLANG));
  private FleetView fleet;

  @AfterEach
  void tearDown() {
    if (fleet != null) {
      fleet.close();
    }
    vllm.close();
    sglang.close();
  }

  private static List<Replica> now(FleetView fleet) throws Exception {
    return fleet.scrapeNow().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void aReplicaNeverScrapedIsUnhealthyAndTheViewNotReady() {
    fleet = FleetView.builder().scrapeTimeout(java.time.Duration.ofSeconds(10)).endpoint(ReplicaEndpoint.builder("a", vllm.uri()).model("m")
        .build()).build();
    assertThat(fleet.replicas()).singleElement().satisfies(r -> {
      assertThat(r.health()).isEqualTo(ReplicaHealth.UNHEALTHY);
      assertThat(r.address()).isEqualTo(vllm.uri().toString());
      assertThat(r.models()).containsOnlyKeys("m");
    });
    assertThat(fleet.ready()).isFalse();
    assertThat(fleet.firstSnapshot().toCompletableFuture()).isNotDone();
  }

  @Test
  void aScrapeFillsLoadAndModelsAsTheParsersReadThem() throws Exception {
    Instant t0 = Instant.parse("2026-01-01T00:00:00Z");
    fleet = FleetView.builder().scrapeTimeout(java.time.Duration.ofSeconds(10))
        .endpoint(ReplicaEndpoint.of("vllm-0", vllm.uri().toString()))
        .endpoint(ReplicaEndpoint.builder("sglang-0", sglang.uri())
            .engine(ReplicaEndpoint.Engine.SGLANG).build())
        .clock(InstantSource.fixed(t0))
        .build();
    List<Replica> replicas = now(fleet);

    EngineMetrics v = EngineMetrics.parse(fixture(EngineServer.VLLM_V1));
    EngineMetrics s = EngineMetrics.parse(fixture(EngineServer.SGLANG));
    assertThat(replicas).extracting(Replica::id).containsExactly("vllm-0", "sglang-0");
    Replica r0 = replicas.get(0);
    assertThat(r0.health()).isEqualTo(ReplicaHealth.HEALTHY);
    assertThat(r0.readySince()).isEqualTo(t0);
    assertThat(r0.load()).isEqualTo(v.replicaLoad());
    assertThat(r0.load().kvCapacityTokens()).isEqualTo(1_188_352);
    assertThat(r0.models()).isEqualTo(v.modelStates()).containsValue(ModelState.ACTIVE);
    Replica r1 = replicas.get(1);
    assertThat(r1.load()).isEqualTo(s.replicaLoad());
    assertThat(r1.load().runningRequests()).isEqualTo(162);
    assertThat(r1.models()).isEqualTo(s.modelStates());
    assertThat(fleet.ready()).isTrue();
    assertThat(fleet.firstSnapshot().toCompletableFuture().get(1, TimeUnit.SECONDS))
        .extracting(Replica::health).contains(ReplicaHealth.HEALTHY);
    assertThat(fleet.replica("sglang-0")).contains(r1);
    assertThat(fleet.replica("nope")).isEmpty();
  }

  @Test
  void theEnginesKvWriteCounterReachesTheReplicaLoadTheRouterReads() throws Exception {
    vllm.metrics(fixture(EngineServer.VLLM_V1)
        + "vllm:generation_tokens_total{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\"} 250.0\n"
        + "vllm:prompt_tokens_by_source_total{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\","
        + "source=\"local_compute\"} 4096.0\n");
    fleet = FleetView.builder().scrapeTimeout(java.time.Duration.ofSeconds(10))
        .endpoint(ReplicaEndpoint.of("a", vllm.uri().toString())).build();
    assertThat(now(fleet).get(0).load().kvWrittenTokens()).isEqualTo(4096 + 250);
  }

  @Test
  void aScrapeFollowsRedirectsAsPrometheusDoesAndReadsOpenMetricsText() throws Exception {
    // the answer prometheus_client gives a scraper asking for OpenMetrics: vllm_ sample names
    sglang.answer("/metrics", EngineServer.Answer.redirect(302, vllm.uri() + "/moved"));
    vllm.answer("/moved", EngineServer.Answer.redirect(308, "/om"));
    vllm.answer("/om", EngineServer.Answer.ok(
        "# TYPE vllm:num_requests_running gauge\n"
        + "vllm_num_requests_running{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\"} 3.0\n"
        + "# TYPE vllm:generation_tokens counter\n"
        + "vllm_generation_tokens_total{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\"} 250.0 "
        + "# {trace_id=\"abc\"} 250.0 1796417768.4740248\n"
        + "# EOF\n"));
    fleet = FleetView.builder().scrapeTimeout(java.time.Duration.ofSeconds(10))
        .endpoint(ReplicaEndpoint.of("a", sglang.uri().toString())).build();
    Replica a = now(fleet).get(0);
    assertThat(a.health()).isEqualTo(ReplicaHealth.HEALTHY);
    assertThat(a.load().runningRequests()).isEqualTo(3);
    assertThat(a.models()).containsKey("Qwen/Qwen3-0.6B");
    assertThat(vllm.count("/om")).isOne();
  }

  @Test
  void theSnapshotIsTheSameObjectUntilSomethingChanges() throws Exception {
    fleet = FleetView.builder().scrapeTimeout(java.time.Duration.ofSeconds(10)).endpoint(ReplicaEndpoint.of("a", vllm.uri().toString())).build();
    List<Replica> first = now(fleet);
    assertThat(fleet.replicas()).isSameAs(first);
    assertThat(now(fleet)).as("an identical scrape").isSameAs(first);
    vllm.metrics(fixture(EngineServer.VLLM_V1).replace(
        "vllm:num_requests_waiting{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\"} 0.0",
        "vllm:num_requests_waiting{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\"} 7.0"));
    List<Replica> changed = now(fleet);
    assertThat(changed).isNotSameAs(first);
    assertThat(changed.get(0).load().waitingRequests()).isEqualTo(7);
    assertThatThrownBy(() -> changed.add(Replica.of("x")))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void snapshotListenersSeeEveryNewSnapshotOnceAndOneThatThrowsDoesNotStopThem() throws Exception {
    fleet = FleetView.builder().scrapeTimeout(java.time.Duration.ofSeconds(10))
        .endpoint(ReplicaEndpoint.of("a", vllm.uri().toString())).build();
    List<List<Replica>> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    fleet.addSnapshotListener(list -> {
      throw new IllegalStateException("a broken listener");
    });
    fleet.addSnapshotListener(seen::add);
    List<Replica> first = now(fleet);
    assertThat(seen).singleElement().isSameAs(first);
    now(fleet); // the same figures: no new snapshot, no call
    assertThat(seen).hasSize(1);
    vllm.metrics(fixture(EngineServer.VLLM_V1).replace(
        "vllm:num_requests_waiting{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\"} 0.0",
        "vllm:num_requests_waiting{engine=\"0\",model_name=\"Qwen/Qwen3-0.6B\"} 3.0"));
    List<Replica> changed = now(fleet);
    assertThat(seen).hasSize(2);
    assertThat(seen.get(1)).isSameAs(changed);
    assertThat(seen.get(1).get(0).load().waitingRequests()).isEqualTo(3);
  }

  @Test
  void outputRatesComeFromTheCounterBetweenScrapesOnTheInjectedTicker() throws Exception {
    String v0 = fixture(EngineServer.VLLM_V0);
    String counter = "vllm:generation_tokens_total{model_name=\"Qwen/Qwen2.5-Coder-1.5B-Instruct\"} ";
    assertThat(v0).contains(counter + "955.0");
    java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong();
    vllm.metrics(v0);
    fleet = FleetView.builder().endpoint(ReplicaEndpoint.of("a", vllm.uri().toString()))
        .ticker(nanos::get).build();
    now(fleet);
    vllm.metrics(v0.replace(counter + "955.0", counter + "1155.0"));
    nanos.addAndGet(2_000_000_000L);
    assertThat(now(fleet).get(0).load().outputTokensPerSecond()).isEqualTo(100.0);
  }

  @Test
  void configuredModelsTakeTheirStateFromTheScrape() throws Exception {
    String asleep = fixture(EngineServer.VLLM_V1) + "vllm:engine_sleep_state{engine=\"0\","
        + "model_name=\"Qwen/Qwen3-0.6B\",sleep_state=\"awake\"} 0.0\n";
    vllm.metrics(asleep);
    fleet = FleetView.builder().scrapeTimeout(java.time.Duration.ofSeconds(10)).endpoint(ReplicaEndpoint.builder("a", vllm.uri())
        .model("qwen").build()).build();
    Replica r = now(fleet).get(0);
    assertThat(r.health()).as("%s", vllm.received).isEqualTo(ReplicaHealth.HEALTHY);
    assertThat(r.models()).containsExactly(java.util.Map.entry("qwen", ModelState.SLEEPING));
  }

  @Test
  void theSleepProbeMarksModelsAsleep() throws Exception {
    vllm.answer("/is_sleeping", EngineServer.Answer.ok("{\"is_sleeping\": true}"));
    fleet = FleetView.builder().scrapeTimeout(java.time.Duration.ofSeconds(10)).endpoint(ReplicaEndpoint.of("a", vllm.uri().toString()))
        .probeSleepState(true).build();
    assertThat(now(fleet).get(0).models()).isNotEmpty().containsValue(ModelState.SLEEPING)
        .doesNotContainValue(ModelState.ACTIVE);
    vllm.answer("/is_sleeping", EngineServer.Answer.ok("{\"is_sleeping\": false}"));
    assertThat(now(fleet).get(0).models()).doesNotContainValue(ModelState.SLEEPING);
  }

  @Test
  void aServerWithoutDevModeIsNotAskedIfItSleepsAgain() throws Exception {
    fleet = FleetView.builder().scrapeTimeout(java.time.Duration.ofSeconds(10)).endpoint(ReplicaEndpoint.of("a", vllm.uri().toString()))
        .probeSleepState(true).build();
    now(fleet);
    now(fleet);
    assertThat(vllm.count("/is_sleeping")).isEqualTo(1);
    assertThat(vllm.count("/metrics")).isEqualTo(2);
  }

  @Test
  void settingsAreCheckedAtTheBoundary() {
    FleetView.Builder b = FleetView.builder();
    assertThatThrownBy(() -> b.scrapeInterval(Duration.ZERO))
        .hasMessage("scrapeInterval: PT0S (expected: > 0)");
    assertThatThrownBy(() -> b.scrapeTimeout(Duration.ofMillis(-1)))
        .hasMessage("scrapeTimeout: PT-0.001S (expected: > 0)");
    assertThatThrownBy(() -> b.failuresToUnhealthy(0))
        .hasMessage("failuresToUnhealthy: 0 (expected: > 0)");
    assertThatThrownBy(() -> b.backoffJitter(1)).hasMessage("backoffJitter: 1.0 (expected: 0 <= x < 1)");
    assertThatThrownBy(() -> b.metricsPath("metrics"))
        .hasMessage("metricsPath: 'metrics' (expected: a path starting with /)");
    assertThatThrownBy(b::build).hasMessage("endpoints: none (expected: endpoint(...) or discovery(...))");
    assertThatThrownBy(() -> FleetView.builder().scrapeTimeout(java.time.Duration.ofSeconds(10)).endpoint(ReplicaEndpoint.of("a", "http://h:1"))
        .initialBackoff(Duration.ofSeconds(2)).maxBackoff(Duration.ofSeconds(1)).build())
        .hasMessage("maxBackoff: PT1S (expected: >= initialBackoff PT2S)");
    assertThatThrownBy(() -> ReplicaEndpoint.of("a", "ftp://h/x"))
        .hasMessageStartingWith("baseUri: ftp://h/x (expected: an absolute http or https URI");
    assertThatThrownBy(() -> ReplicaEndpoint.builder("a", java.net.URI.create("http://h:1"))
        .dataParallelRanks(0)).hasMessage("dataParallelRanks: 0 (expected: > 0)");
    assertThat(ReplicaEndpoint.builder("a", java.net.URI.create("http://h:1/"))
        .kvEventsUri(java.net.URI.create("tcp://h:5557")).dataParallelRanks(2).build())
        .satisfies(e -> {
          assertThat(e.baseUri()).hasToString("http://h:1");
          assertThat(e.kvEventsUri()).contains(java.net.URI.create("tcp://h:5557"));
          assertThat(e.dataParallelRanks()).isEqualTo(2);
        });
  }
}
