package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.examples.fakevllm.FakeVllmConfig;
import io.affinityrouter.examples.fakevllm.FakeVllmServer;
import io.affinityrouter.examples.json.Json;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@code /v1/models}, {@code /metrics} and {@code /health}, read over HTTP as a scraper would. */
class GatewayObservabilityTest {
  private static final String CHAT = "/v1/chat/completions";
  private final ChatClient client = new ChatClient();
  private TestFleet fleet;

  @AfterEach
  void close() {
    if (fleet != null) {
      fleet.close();
    }
  }

  private HttpResponse<String> get(String url) throws Exception {
    return client.http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20))
        .GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The value of the first sample of {@code name} whose labels include every {@code label}. */
  static double sample(String metrics, String name, String... labels) {
    Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*})? (\\S+)$")
        .matcher(metrics);
    while (m.find()) {
      String l = m.group(1) == null ? "" : m.group(1);
      boolean all = true;
      for (String label : labels) {
        all &= l.contains(label);
      }
      if (all) {
        return Double.parseDouble(m.group(2));
      }
    }
    throw new AssertionError("no sample " + name + " " + List.of(labels) + " in\n" + metrics);
  }

  @Test
  void modelsListsEveryBackendsModelsInOpenAiShape() throws Exception {
    fleet = new TestFleet();
    fleet.backends.add(FakeVllmServer.start(new InetSocketAddress("127.0.0.1", 0),
        FakeVllmConfig.builder().model("model-a").latencyScale(0).build()));
    fleet.backends.add(FakeVllmServer.start(new InetSocketAddress("127.0.0.1", 0),
        FakeVllmConfig.builder().model("model-b").latencyScale(0).build()));
    Gateway g = fleet.gateway(fleet.config(), null);
    HttpResponse<String> r = get(g.baseUrl() + "/v1/models");
    assertThat(r.statusCode()).isEqualTo(200);
    Map<String, Object> list = Json.parseObject(r.body());
    assertThat(list.get("object")).isEqualTo("list");
    List<?> data = (List<?>) list.get("data");
    assertThat(data.stream().map(x -> (Object) ((Map<?, ?>) x).get("id")).toList())
        .containsExactly("model-a", "model-b");
    assertThat(data).allSatisfy(m -> assertThat(((Map<?, ?>) m).get("object")).isEqualTo("model"));
    ChatClient.Reply b = client.post(g.baseUrl(), CHAT, "s",
        new Conversation("s", "model-b", "hi").next(2, false));
    assertThat(b.status()).isEqualTo(200);
    assertThat(b.replica()).isEqualTo("vllm-1");
  }

  @Test
  void metricsShowDecisionsRepinsTokensInFlightStoreLatencyAndUpstreamErrors() throws Exception {
    fleet = TestFleet.start(2, FakeVllmConfig.builder().latencyScale(0).apiKey("k"));
    Gateway g = fleet.gateway(fleet.config().scrapeInterval(Duration.ofSeconds(30)), null);
    Conversation c = new Conversation("m-1", TestFleet.MODEL, Conversation.systemPrompt(1, 2000));
    String first = null;
    for (int turn = 0; turn < 3; turn++) {
      HttpResponse<String> r = client.http.send(HttpRequest.newBuilder(URI.create(g.baseUrl()
              + CHAT)).header("Authorization", "Bearer k").header("x-session-id", "m-1")
          .POST(HttpRequest.BodyPublishers.ofString(c.next(4, false))).build(),
          HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(200);
      c.answeredFrom(r.body());
      first = r.headers().firstValue("x-affinity-replica").orElseThrow();
    }
    fleet.backend(first).close(); // the next turn is refused there and repinned
    HttpResponse<String> moved = client.http.send(HttpRequest.newBuilder(URI.create(g.baseUrl()
            + CHAT)).header("Authorization", "Bearer k").header("x-session-id", "m-1")
        .POST(HttpRequest.BodyPublishers.ofString(c.next(4, false))).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(moved.statusCode()).isEqualTo(200);
    assertThat(moved.headers().firstValue("x-affinity-reason")).contains("SESSION_REPINNED");
    String other = moved.headers().firstValue("x-affinity-replica").orElseThrow();
    assertThat(client.post(g.baseUrl(), CHAT, "no-key", new Conversation("no-key",
        TestFleet.MODEL, "hi").next(2, false)).status()).isEqualTo(401);
    assertThat(client.post(g.baseUrl(), CHAT, "u", new Conversation("u", "nope", "hi")
        .next(2, false)).status()).isEqualTo(404);

    HttpResponse<String> r = get(g.baseUrl() + "/metrics");
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(
        t -> assertThat(t).startsWith("text/plain"));
    String m = r.body();
    assertThat(sample(m, "affinity_router_decisions_total", "reason=\"session_claimed\""))
        .isEqualTo(2); // m-1 and no-key
    // turns 2 and 3, and the 4th's first attempt (refused, then routed again)
    assertThat(sample(m, "affinity_router_decisions_total", "reason=\"session_affinity\""))
        .isGreaterThanOrEqualTo(2);
    assertThat(sample(m, "affinity_router_decisions_total", "reason=\"session_repinned\""))
        .isEqualTo(1);
    assertThat(sample(m, "affinity_router_repins_total", "cause=\"replica_unhealthy\""))
        .isEqualTo(1);
    double prompt = sample(m, "affinity_router_prompt_tokens_total", "model=\"test-model\"");
    double matched = sample(m, "affinity_router_prefix_matched_tokens_total",
        "model=\"test-model\"");
    assertThat(matched).isPositive().isLessThan(prompt);
    assertThat(sample(m, "affinity_router_replica_in_flight", "replica=\"" + other + "\""))
        .isZero();
    assertThat(sample(m, "affinity_router_replica_in_flight", "replica=\"" + first + "\""))
        .isZero();
    assertThat(sample(m, "affinity_router_store_latency_seconds_count",
        "operation=\"get_or_claim\"", "outcome=\"ok\"")).isGreaterThanOrEqualTo(4);
    assertThat(m).contains("affinity_router_store_latency_seconds_bucket{");
    assertThat(sample(m, "affinity_router_upstream_errors_total", "status=\"401\"")).isEqualTo(1);
    assertThat(sample(m, "affinity_router_gateway_rejected_total", "code=\"model_not_found\""))
        .isEqualTo(1);
  }

  @Test
  void degradedDecisionsAndStoreErrorsAreCountedWhenRedisStops() throws Exception {
    fleet = TestFleet.start(2, FakeVllmConfig.builder().latencyScale(0));
    RedisServer redis = RedisServer.start();
    try {
      Gateway g = fleet.gateway(fleet.config().redisUri(redis.uri())
          .storeTimeout(Duration.ofMillis(200)), null);
      assertThat(client.post(g.baseUrl(), CHAT, "before",
          new Conversation("before", TestFleet.MODEL, "hi").next(2, false)).status())
          .isEqualTo(200);
      redis.stop();
      ChatClient.Reply r = client.post(g.baseUrl(), CHAT, "after",
          new Conversation("after", TestFleet.MODEL, "hi").next(2, false));
      assertThat(r.status()).isEqualTo(200);
      assertThat(r.headers().firstValue("x-affinity-degraded")).contains("true");
      String m = get(g.baseUrl() + "/metrics").body();
      assertThat(sample(m, "affinity_router_decisions_degraded_total", "model=\"test-model\""))
          .isEqualTo(1);
      assertThat(sample(m, "affinity_router_store_latency_seconds_count",
          "operation=\"get_or_claim\"", "outcome=\"ok\"")).isEqualTo(1);
      assertThat(TestFleet.await(() -> {
        try {
          return sample(get(g.baseUrl() + "/metrics").body(),
              "affinity_router_store_latency_seconds_count", "operation=\"get_or_claim\"",
              "outcome=\"error\"") >= 1;
        } catch (Exception e) {
          return false;
        }
      })).as("the failed store call timed as an error").isTrue();
    } finally {
      redis.stop();
    }
  }

  @Test
  void readyOnceTheBackendViewHasASnapshot() throws Exception {
    FakeVllmServer probe = FakeVllmServer.start(new InetSocketAddress("127.0.0.1", 0),
        FakeVllmConfig.builder().model(TestFleet.MODEL).build());
    int port = probe.port();
    probe.close(); // nothing listens there yet
    fleet = new TestFleet();
    Gateway g = fleet.gateway(GatewayConfig.builder()
        .listen(new InetSocketAddress("127.0.0.1", 0)).scrapeInterval(Duration.ofMillis(50))
        .backend("vllm-0", URI.create("http://127.0.0.1:" + port)), null);
    assertThat(get(g.baseUrl() + "/health/live").statusCode()).isEqualTo(200);
    HttpResponse<String> starting = get(g.baseUrl() + "/health/ready");
    assertThat(starting.statusCode()).isEqualTo(503);
    assertThat(starting.body()).contains("\"status\":\"starting\"");
    ChatClient.Reply early = client.post(g.baseUrl(), CHAT, "e",
        new Conversation("e", TestFleet.MODEL, "hi").next(2, false));
    assertThat(early.status()).isEqualTo(503);
    assertThat(early.headers().firstValue("Retry-After")).isPresent();

    fleet.backends.add(FakeVllmServer.start(new InetSocketAddress("127.0.0.1", port),
        FakeVllmConfig.builder().model(TestFleet.MODEL).latencyScale(0).build()));
    assertThat(TestFleet.await(() -> {
      try {
        return get(g.baseUrl() + "/health").statusCode() == 200;
      } catch (Exception e) {
        return false;
      }
    })).as("ready after the first scrape").isTrue();
    assertThat(get(g.baseUrl() + "/health/ready").body()).contains("\"status\":\"ready\"")
        .contains("\"healthy_backends\":1");
    assertThat(client.post(g.baseUrl(), CHAT, "e",
        new Conversation("e", TestFleet.MODEL, "hi").next(2, false)).status()).isEqualTo(200);
  }
}
