package io.affinityrouter.examples.httpgateway;

import static io.affinityrouter.examples.httpgateway.GatewayObservabilityTest.sample;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.ModelState;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.core.lifecycle.LifecycleState;
import io.affinityrouter.core.lifecycle.ModelClaim;
import io.affinityrouter.examples.fakevllm.FakeVllmConfig;
import io.affinityrouter.examples.fakevllm.FakeVllmServer;
import io.affinityrouter.examples.json.Json;
import io.affinityrouter.redis.RedisBindingStoreBuilder;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Model claims in the gateway, over two fake vLLM backends that implement sleep mode: vllm-0
 * serves {@value #IDLE} (no minimum, idle after 1 s), vllm-1 serves {@value #KEPT} (minimum 1).
 */
class GatewayLifecycleTest {
  private static final String CHAT = "/v1/chat/completions";
  private static final String IDLE = "idle-model";
  private static final String KEPT = "kept-model";
  private static final Duration IDLE_TIME = Duration.ofSeconds(1);
  private static final long AWAIT_NANOS = Duration.ofSeconds(30).toNanos();

  private final ChatClient client = new ChatClient();
  private TestFleet fleet;

  @AfterEach
  void close() {
    if (fleet != null) {
      fleet.close();
    }
  }

  private Gateway start() {
    startBackends();
    return fleet.gateway(claims(fleet.config()).gatewayId("gateway-under-test"), null);
  }

  private void startBackends() {
    fleet = new TestFleet();
    fleet.backends.add(FakeVllmServer.start(new InetSocketAddress("127.0.0.1", 0),
        FakeVllmConfig.builder().model(IDLE).latencyScale(0).build()));
    fleet.backends.add(FakeVllmServer.start(new InetSocketAddress("127.0.0.1", 0),
        FakeVllmConfig.builder().model(KEPT).latencyScale(0).build()));
  }

  private static GatewayConfig.Builder claims(GatewayConfig.Builder config) {
    return config
        .claim(ModelClaim.builder(IDLE).gpuMemoryBytes(10L << 30).idleTimeout(IDLE_TIME).build())
        .claim(ModelClaim.builder(KEPT).gpuMemoryBytes(10L << 30).minAwake(1).maxAwake(1)
            .idleTimeout(IDLE_TIME).build())
        .gpuMemoryBytes(24L << 30)
        .lifecycleInterval(Duration.ofMillis(200));
  }

  /** Waits up to 30 s for the condition; returns whether it held. */
  private static boolean await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + AWAIT_NANOS;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(10);
    }
    return true;
  }

  private HttpResponse<String> get(String url) throws Exception {
    return client.http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20))
        .GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  private static LifecycleState.ModelStatus status(Gateway g, String model) {
    return g.lifecycleState().orElseThrow().models().stream()
        .filter(m -> m.model().equals(model)).findFirst().orElseThrow();
  }

  private static String chat(String model) {
    return new Conversation("s-" + model, model, "hi").next(4, false);
  }

  @Test
  void anIdleModelIsPutToSleepOnItsBackendAndAModelAtItsMinimumNever() throws Exception {
    Gateway g = start();
    FakeVllmServer idle = fleet.backend("vllm-0");
    FakeVllmServer kept = fleet.backend("vllm-1");
    long started = System.nanoTime();

    assertThat(await(idle::isSleeping)).as("the idle model's engine put to sleep").isTrue();
    assertThat(Json.parseObject(get(idle.baseUrl() + "/is_sleeping").body()))
        .containsEntry("is_sleeping", true);
    assertThat(client.post(idle.baseUrl(), CHAT, null, chat(IDLE)).status())
        .as("the sleeping engine refuses completions").isEqualTo(503);
    assertThat(await(() -> g.replicas().stream().anyMatch(
        r -> r.models().get(IDLE) == ModelState.SLEEPING))).isTrue();
    assertThat(await(() -> status(g, IDLE).asleep() == 1)).isTrue();

    // idle for three times its idle time and more, the model at its minimum is left awake
    long threeIdle = started + IDLE_TIME.multipliedBy(3).toNanos();
    while (System.nanoTime() < threeIdle) {
      Thread.sleep(50);
    }
    assertThat(kept.sleeps()).as("sleeps of the model at its minimum").isZero();
    assertThat(kept.isSleeping()).isFalse();
    assertThat(Json.parseObject(get(kept.baseUrl() + "/is_sleeping").body()))
        .containsEntry("is_sleeping", false);
    assertThat(client.post(g.baseUrl(), CHAT, "k", chat(KEPT)).status()).isEqualTo(200);
    assertThat(idle.sleeps()).as("slept once, not again and again").isEqualTo(1);
    LifecycleState state = g.lifecycleState().orElseThrow();
    assertThat(state.leader()).isTrue();
    assertThat(state.actionsDone()).isEqualTo(1);
    assertThat(state.actionsUnsupported()).isZero();
    assertThat(status(g, KEPT).awake()).isEqualTo(1);
  }

  @Test
  void aRequestForASleepingModelIsAnsweredAsWakingAndTheLifecycleWakesIt() throws Exception {
    Gateway g = start();
    FakeVllmServer idle = fleet.backend("vllm-0");
    assertThat(await(() -> g.replicas().stream().anyMatch(
        r -> r.models().get(IDLE) == ModelState.SLEEPING))).isTrue();
    assertThat(idle.wakeUps()).isZero();

    ChatClient.Reply r = client.post(g.baseUrl(), CHAT, "sleepy", chat(IDLE));
    assertThat(r.status()).isEqualTo(503);
    assertThat(r.reason()).isEqualTo(RoutingReason.MODEL_WAKING.name());
    assertThat(r.headers().firstValue("Retry-After")).hasValueSatisfying(
        v -> assertThat(Integer.parseInt(v)).isPositive());

    assertThat(await(() -> !idle.isSleeping())).as("the lifecycle woke the engine").isTrue();
    assertThat(idle.wakeUps()).isEqualTo(1);
    assertThat(g.wakeRequestsSent()).as("one wake, the lifecycle's").isEqualTo(1);
    assertThat(await(() -> g.replicas().stream().anyMatch(
        x -> x.models().get(IDLE) == ModelState.ACTIVE))).isTrue();
    ChatClient.Reply retry = client.post(g.baseUrl(), CHAT, "sleepy", chat(IDLE));
    assertThat(retry.status()).isEqualTo(200);
    assertThat(retry.replica()).isEqualTo("vllm-0");
    assertThat(await(() -> g.lifecycleState().orElseThrow().actionsDone() == 2)).isTrue();
    assertThat(await(() -> status(g, IDLE).awake() == 1)).isTrue();
    // woken, it stays awake for the wake cooldown (30 s) though idle again at once
    Thread.sleep(IDLE_TIME.multipliedBy(2).toMillis());
    assertThat(idle.isSleeping()).isFalse();
    assertThat(idle.sleeps()).isEqualTo(1);
  }

  @Test
  void metricsAndHealthShowTheLifecycleState() throws Exception {
    Gateway g = start();
    assertThat(await(() -> {
      try {
        String m = get(g.baseUrl() + "/metrics").body();
        return sample(m, "affinity_router_lifecycle_copies", "model=\"" + IDLE + "\"",
            "state=\"asleep\"") == 1;
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    })).as("the idle model asleep on /metrics").isTrue();
    String m = get(g.baseUrl() + "/metrics").body();
    assertThat(sample(m, "affinity_router_lifecycle_copies", "model=\"" + IDLE + "\"",
        "state=\"awake\"")).isZero();
    assertThat(sample(m, "affinity_router_lifecycle_copies", "model=\"" + IDLE + "\"",
        "state=\"waking\"")).isZero();
    assertThat(sample(m, "affinity_router_lifecycle_copies", "model=\"" + KEPT + "\"",
        "state=\"awake\"")).isEqualTo(1);
    assertThat(sample(m, "affinity_router_lifecycle_copies", "model=\"" + KEPT + "\"",
        "state=\"asleep\"")).isZero();
    assertThat(sample(m, "affinity_router_lifecycle_min_awake", "model=\"" + KEPT + "\""))
        .isEqualTo(1);
    assertThat(sample(m, "affinity_router_lifecycle_max_awake", "model=\"" + KEPT + "\""))
        .isEqualTo(1);
    assertThat(m).doesNotContain("affinity_router_lifecycle_max_awake{model=\"" + IDLE);
    assertThat(sample(m, "affinity_router_lifecycle_idle_seconds", "model=\"" + IDLE + "\""))
        .isGreaterThanOrEqualTo(1.0);
    assertThat(sample(m, "affinity_router_lifecycle_leader")).isEqualTo(1);
    assertThat(sample(m, "affinity_router_lifecycle_actions_total", "outcome=\"done\""))
        .isEqualTo(1);
    assertThat(sample(m, "affinity_router_lifecycle_actions_total", "outcome=\"failed\""))
        .isZero();
    assertThat(sample(m, "affinity_router_lifecycle_actions_total", "outcome=\"unsupported\""))
        .isZero();
    assertThat(sample(m, "affinity_router_lifecycle_actions_in_flight")).isZero();

    HttpResponse<String> health = get(g.baseUrl() + "/health");
    assertThat(health.statusCode()).isEqualTo(200);
    Map<String, Object> body = Json.parseObject(health.body());
    assertThat(body.get("status")).isEqualTo("ready");
    @SuppressWarnings("unchecked")
    Map<String, Object> lifecycle = (Map<String, Object>) body.get("lifecycle");
    assertThat(lifecycle.get("leader")).isEqualTo(true);
    assertThat(lifecycle.get("actions_in_flight")).isEqualTo(0L);
    @SuppressWarnings("unchecked")
    Map<String, Map<String, Object>> models =
        (Map<String, Map<String, Object>>) lifecycle.get("models");
    assertThat(models.keySet()).containsExactly(IDLE, KEPT);
    assertThat(models.get(IDLE)).containsEntry("awake", 0L)
        .containsEntry("asleep", 1L).containsEntry("waking", 0L).containsEntry("min_awake", 0L)
        .doesNotContainKey("max_awake");
    assertThat(models.get(KEPT)).containsEntry("awake", 1L)
        .containsEntry("asleep", 0L).containsEntry("min_awake", 1L)
        .containsEntry("max_awake", 1L);
  }

  @Test
  void withoutClaimsThereIsNoLifecycle() throws Exception {
    fleet = TestFleet.start(1, FakeVllmConfig.builder().latencyScale(0));
    Gateway g = fleet.gateway(fleet.config(), null);
    assertThat(g.lifecycleState()).isEmpty();
    assertThat(get(g.baseUrl() + "/metrics").body()).doesNotContain("affinity_router_lifecycle");
    assertThat(Json.parseObject(get(g.baseUrl() + "/health").body())).doesNotContainKey(
        "lifecycle");
  }

  @Test
  void gatewaysSharingRedisActThroughOneLeaderAndTheOtherTakesOver() throws Exception {
    try (RedisServer redis = RedisServer.start()) {
      startBackends();
      Gateway a = fleet.gateway(claims(fleet.config()).redisUri(redis.uri())
          .storeTimeout(Duration.ofMillis(500)).gatewayId("gateway-a"), null);
      Gateway b = fleet.gateway(claims(fleet.config()).redisUri(redis.uri())
          .storeTimeout(Duration.ofMillis(500)).gatewayId("gateway-b"), null);
      FakeVllmServer idle = fleet.backend("vllm-0");
      assertThat(await(idle::isSleeping)).isTrue();
      assertThat(await(() -> a.lifecycleState().orElseThrow().leader()
          ^ b.lifecycleState().orElseThrow().leader())).as("one leader").isTrue();
      Gateway leader = a.lifecycleState().orElseThrow().leader() ? a : b;
      Gateway follower = leader == a ? b : a;
      assertThat(redis.cli("hget",
          RedisBindingStoreBuilder.DEFAULT_KEY_PREFIX + "lease:" + Gateway.LIFECYCLE_LEASE,
          "holder"))
          .isEqualTo(leader == a ? "gateway-a" : "gateway-b");
      Thread.sleep(IDLE_TIME.multipliedBy(2).toMillis());
      assertThat(idle.sleeps()).as("slept by one gateway, once").isEqualTo(1);
      assertThat(fleet.backend("vllm-1").sleeps()).isZero();
      assertThat(leader.lifecycleState().orElseThrow().actionsDone()
          + follower.lifecycleState().orElseThrow().actionsDone()).isEqualTo(1);
      assertThat(follower.lifecycleState().orElseThrow().leader()).isFalse();

      leader.shutdown(Duration.ofMillis(200)); // gives the lease up
      assertThat(await(() -> follower.lifecycleState().orElseThrow().leader()))
          .as("the other gateway takes the lease over").isTrue();
      ChatClient.Reply r = client.post(follower.baseUrl(), CHAT, "s", chat(IDLE));
      assertThat(r.status()).isEqualTo(503);
      assertThat(await(() -> !idle.isSleeping())).as("woken by the new leader").isTrue();
    }
  }
}
