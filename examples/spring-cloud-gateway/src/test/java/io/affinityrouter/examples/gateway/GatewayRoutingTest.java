package io.affinityrouter.examples.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.ModelState;
import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.RepinCause;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.engine.FleetView;
import io.affinityrouter.examples.gateway.fake.FakeVllmBackend;
import io.affinityrouter.spi.RoutingListener;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The example gateway, started on a random port in front of three {@link FakeVllmBackend}s on
 * 127.0.0.1 (found through Spring Cloud's simple discovery client, as {@code application.yml}
 * does), driven over HTTP.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "affinity-router.max-in-flight-requests=4",
    "affinity-router.scrape.interval=50ms",
    "affinity-router.unavailable-retry-after=7s"})
class GatewayRoutingTest {
  static final String MODEL = "llama-3-8b";
  static final List<FakeVllmBackend> BACKENDS = new CopyOnWriteArrayList<>();

  @DynamicPropertySource
  static void backends(DynamicPropertyRegistry registry) throws IOException {
    for (int i = 0; i < 3; i++) {
      FakeVllmBackend b = new FakeVllmBackend("backend-" + (i + 1), MODEL, 0);
      BACKENDS.add(b);
      registry.add("spring.cloud.discovery.client.simple.instances.vllm[" + i + "].uri",
          () -> b.uri().toString());
    }
  }

  @AfterAll
  static void stopBackends() {
    BACKENDS.forEach(FakeVllmBackend::close);
  }

  /** Captures every decision, by session id ("" without one), in order. */
  @TestConfiguration
  static class Capture {
    @Bean
    CapturingListener capturingListener() {
      return new CapturingListener();
    }
  }

  static final class CapturingListener implements RoutingListener {
    final Map<String, List<RoutingDecision>> bySession = new ConcurrentHashMap<>();

    @Override
    public void onDecision(RoutingRequest request, RoutingDecision decision, long selectNanos) {
      bySession.computeIfAbsent(request.sessionId().orElse(""), k -> new CopyOnWriteArrayList<>())
          .add(decision);
    }

    List<RoutingDecision> of(String session) {
      return bySession.getOrDefault(session, List.of());
    }
  }

  @LocalServerPort
  int port;
  @Autowired
  CapturingListener decisions;
  @Autowired
  FleetView fleet;

  final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();

  @BeforeEach
  void fleetIsScraped() throws InterruptedException {
    // Every backend has been listed and scraped: known load, the model, healthy.
    await("three healthy scraped backends", () -> BACKENDS.stream().allMatch(b -> fleet
        .replica("127.0.0.1:" + b.port())
        .filter(r -> r.health() == ReplicaHealth.HEALTHY && r.models().containsKey(MODEL))
        .isPresent()), () -> sendTurn("warm-up", 1).statusCode());
  }

  @AfterEach
  void releaseBackends() {
    BACKENDS.forEach(FakeVllmBackend::release);
  }

  @Test
  void multiTurnSessionsStayOnOneBackend() throws Exception {
    int sessions = 9;
    int turns = 5;
    for (int turn = 1; turn <= turns; turn++) {
      for (int s = 0; s < sessions; s++) {
        HttpResponse<String> r = sendTurn("stay-" + s, turn);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("served by backend-");
      }
    }
    List<String> used = new ArrayList<>();
    for (int s = 0; s < sessions; s++) {
      String session = "stay-" + s;
      List<String> holders = BACKENDS.stream()
          .filter(b -> b.servedSessions().contains(session)).map(FakeVllmBackend::name).toList();
      assertThat(holders).as("backends that served %s", session).hasSize(1);
      assertThat(BACKENDS.stream().mapToLong(b -> b.servedSessions().stream()
          .filter(session::equals).count()).sum()).isEqualTo(turns);
      used.add(holders.get(0));
      // the gateway read the body to route it, and forwarded it intact
      FakeVllmBackend holder = BACKENDS.stream().filter(b -> b.name().equals(holders.get(0)))
          .findFirst().orElseThrow();
      List<String> bodies = new ArrayList<>();
      List<String> served = holder.servedSessions();
      List<String> servedBodies = holder.servedBodies();
      for (int i = 0; i < served.size(); i++) {
        if (served.get(i).equals(session)) {
          bodies.add(servedBodies.get(i));
        }
      }
      List<String> sent = new ArrayList<>();
      for (int turn = 1; turn <= turns; turn++) {
        sent.add(chatBody(session, turn));
      }
      assertThat(bodies).isEqualTo(sent);
      List<RoutingDecision> ds = decisions.of(session);
      assertThat(ds).hasSize(turns);
      assertThat(ds.get(0).reason()).isEqualTo(RoutingReason.SESSION_CLAIMED);
      assertThat(ds.subList(1, turns)).allMatch(d -> d.reason() == RoutingReason.SESSION_AFFINITY);
      // closed once the response is written, which may trail the client's read by a moment
      await("the leases of " + session + " are closed",
          () -> ds.stream().allMatch(d -> d.lease().isClosed()), () -> 0);
    }
    // Cold sessions are spread by load, not piled onto one backend.
    assertThat(used.stream().distinct().count()).isGreaterThan(1);
  }

  @Test
  void sessionMovesOnceWhenItsBackendGoesAway() throws Exception {
    String session = "mover";
    assertThat(sendTurn(session, 1).statusCode()).isEqualTo(200);
    String first = decisions.of(session).get(0).replica().id();
    int index = indexOf(first);
    FakeVllmBackend gone = BACKENDS.get(index);
    gone.close();
    await("the stopped backend turns unhealthy",
        () -> fleet.replica(first).map(r -> r.health() == ReplicaHealth.UNHEALTHY).orElse(false),
        () -> 0);

    for (int turn = 2; turn <= 5; turn++) {
      HttpResponse<String> r = sendTurn(session, turn);
      assertThat(r.statusCode()).isEqualTo(200);
    }
    List<RoutingDecision> ds = decisions.of(session);
    assertThat(ds).hasSize(5);
    RoutingDecision moved = ds.get(1);
    assertThat(moved.reason()).isEqualTo(RoutingReason.SESSION_REPINNED);
    assertThat(moved.repinCause()).contains(RepinCause.REPLICA_UNHEALTHY);
    assertThat(moved.previousReplicaId()).contains(first);
    String second = moved.replica().id();
    assertThat(second).isNotEqualTo(first);
    assertThat(ds.subList(2, 5)).allMatch(d -> d.reason() == RoutingReason.SESSION_AFFINITY
        && d.replica().id().equals(second));

    // The old backend comes back on its port: the session does not bounce back to it.
    FakeVllmBackend back = new FakeVllmBackend(gone.name(), MODEL, gone.port());
    BACKENDS.set(index, back);
    await("the backend is healthy again", () -> fleet.replica(first)
        .map(r -> r.health() == ReplicaHealth.HEALTHY).orElse(false), () -> 0);
    assertThat(sendTurn(session, 6).statusCode()).isEqualTo(200);
    assertThat(decisions.of(session).get(5).replica().id()).isEqualTo(second);
    assertThat(back.servedSessions()).doesNotContain(session);
  }

  @Test
  void leaseIsReleasedWhenTheClientCancels() throws Exception {
    BACKENDS.forEach(FakeVllmBackend::hold);
    int arrivedBefore = arrivedTotal();
    String body = chatBody("cancel-me", 1);
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    RoutingDecision decision;
    try (Socket socket = new Socket("127.0.0.1", port)) {
      OutputStream out = socket.getOutputStream();
      out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:" + port
          + "\r\nContent-Type: application/json\r\nx-session-id: cancel-me\r\nContent-Length: "
          + bytes.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
      out.write(bytes);
      out.flush();
      await("the request reaches a backend", () -> arrivedTotal() == arrivedBefore + 1, () -> 0);
      decision = decisions.of("cancel-me").get(0);
      assertThat(decision.isRouted()).isTrue();
      Thread.sleep(200);
      assertThat(decision.lease().isClosed()).as("lease while the backend works").isFalse();
    } // the client goes away while the backend still holds the request
    await("the lease is closed after the client left", () -> decision.lease().isClosed(), () -> 0);
  }

  @Test
  void streamedCompletionHoldsTheLeaseUntilTheStreamEnds() throws Exception {
    BACKENDS.forEach(FakeVllmBackend::hold);
    String body = chatBody("streamer", 1).replace("{\"model\"", "{\"stream\":true,\"model\"");
    HttpResponse<java.util.stream.Stream<String>> r = http.send(chat(Optional.of("streamer"), body),
        HttpResponse.BodyHandlers.ofLines());
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(
        t -> assertThat(t).startsWith("text/event-stream"));
    java.util.Iterator<String> lines = r.body().iterator();
    assertThat(lines.next()).contains("\"content\":\"served\"");
    RoutingDecision decision = decisions.of("streamer").get(0);
    Thread.sleep(200);
    assertThat(decision.lease().isClosed()).as("lease after the first token").isFalse();

    BACKENDS.forEach(FakeVllmBackend::release);
    List<String> rest = new ArrayList<>();
    lines.forEachRemaining(rest::add);
    assertThat(String.join("\n", rest)).contains("\"content\":\" by backend-").endsWith("data: [DONE]\n");
    await("the lease is closed after the stream", () -> decision.lease().isClosed(), () -> 0);
  }

  @Test
  void allAtLimitIs429AndUnknownModelIs503WithRetryAfter() throws Exception {
    BACKENDS.forEach(FakeVllmBackend::hold);
    int arrivedBefore = arrivedTotal();
    List<CompletableFuture<HttpResponse<String>>> held = new ArrayList<>();
    for (int i = 0; i < 12; i++) { // 3 backends x max-in-flight-requests 4
      held.add(http.sendAsync(chat(Optional.empty(), chatBody(null, 1)),
          HttpResponse.BodyHandlers.ofString()));
    }
    await("12 requests held by the backends", () -> arrivedTotal() == arrivedBefore + 12, () -> 0);

    HttpResponse<String> refused = http.send(chat(Optional.empty(), chatBody(null, 1)),
        HttpResponse.BodyHandlers.ofString());
    assertThat(refused.statusCode()).isEqualTo(429);
    assertThat(refused.headers().firstValue("Retry-After")).contains("1");
    assertThat(refused.body()).contains("\"code\":\"all_at_limit\"");
    assertThat(arrivedTotal()).as("nothing sent to a random backend").isEqualTo(arrivedBefore + 12);

    BACKENDS.forEach(FakeVllmBackend::release);
    for (CompletableFuture<HttpResponse<String>> f : held) {
      assertThat(f.get().statusCode()).isEqualTo(200);
    }

    HttpResponse<String> unknown = http.send(chat(Optional.of("s-unknown"),
        chatBody(null, 1).replace(MODEL, "no-such-model")), HttpResponse.BodyHandlers.ofString());
    assertThat(unknown.statusCode()).isEqualTo(503);
    assertThat(unknown.headers().firstValue("Retry-After")).contains("7");
    assertThat(unknown.body()).contains("\"code\":\"no_replica\"");
  }

  @Test
  void prometheusShowsTheDecisionMeters() throws Exception {
    assertThat(sendTurn("metered", 1).statusCode()).isEqualTo(200);
    assertThat(sendTurn("metered", 2).statusCode()).isEqualTo(200);
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + port + "/actuator/prometheus")).GET().build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    String text = r.body();
    assertThat(text).containsPattern("affinity_router_decisions_total\\{[^}]*model=\"" + MODEL
        + "\"[^}]*reason=\"session_claimed\"[^}]*} [1-9]");
    assertThat(text).containsPattern("affinity_router_decisions_total\\{[^}]*model=\"" + MODEL
        + "\"[^}]*reason=\"session_affinity\"[^}]*} [1-9]");
    assertThat(text).containsPattern("affinity_router_select_seconds_count\\{routed=\"true\"} [1-9]");
    assertThat(text).containsPattern(
        "affinity_router_prefix_matched_blocks_count\\{model=\"" + MODEL + "\"} [1-9]");
    // The second turn extends the first: its prefix blocks were found on the session's backend.
    assertThat(decisions.of("metered").get(1).matchedBlocks()).isPositive();
  }

  @Test
  void replicasCarryTheScrapedLoad() throws Exception {
    Replica scraped = fleet.replica("127.0.0.1:" + BACKENDS.get(0).port()).orElseThrow();
    // kv_cache_size_tokens of cache_config_info in the captured vLLM exposition
    assertThat(scraped.load().kvCapacityTokens()).isEqualTo(1_188_352);
    assertThat(scraped.models()).containsEntry(MODEL, ModelState.ACTIVE);

    BACKENDS.forEach(FakeVllmBackend::hold);
    int arrivedBefore = arrivedTotal();
    CompletableFuture<HttpResponse<String>> pending = http.sendAsync(
        chat(Optional.of("loaded"), chatBody("loaded", 1)), HttpResponse.BodyHandlers.ofString());
    await("the request reaches a backend", () -> arrivedTotal() == arrivedBefore + 1, () -> 0);
    String id = decisions.of("loaded").get(0).replica().id();
    await("the backend's scrape shows one running request", () -> fleet.replica(id)
        .map(r -> r.load().runningRequests() == 1).orElse(false), () -> 0);
    BACKENDS.forEach(FakeVllmBackend::release);
    assertThat(pending.get().statusCode()).isEqualTo(200);
    await("the backend's scrape shows it idle", () -> fleet.replica(id)
        .map(r -> r.load().runningRequests() == 0).orElse(false), () -> 0);
  }

  // --- helpers ---

  private HttpResponse<String> sendTurn(String session, int turn) {
    try {
      return http.send(chat(Optional.of(session), chatBody(session, turn)),
          HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private HttpRequest chat(Optional<String> session, String body) {
    HttpRequest.Builder b = HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + port + "/v1/chat/completions"))
        .timeout(Duration.ofSeconds(30))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
    session.ifPresent(s -> b.header("x-session-id", s));
    return b.build();
  }

  /** An OpenAI chat body whose messages are the conversation up to {@code turn}. */
  static String chatBody(String session, int turn) {
    StringBuilder sb = new StringBuilder("{\"model\":\"" + MODEL + "\",\"messages\":[");
    sb.append("{\"role\":\"system\",\"content\":\"You are a careful assistant for the ")
        .append(session == null ? "anonymous" : session)
        .append(" project. Answer briefly and cite the files you read.\"}");
    for (int t = 1; t <= turn; t++) {
      sb.append(",{\"role\":\"user\",\"content\":\"Turn ").append(t)
          .append(": please summarise section ").append(t).append(" of the design document and "
              + "list the open questions it raises for the routing layer.\"}");
      if (t < turn) {
        sb.append(",{\"role\":\"assistant\",\"content\":\"Section ").append(t)
            .append(" describes how sessions are pinned; the open question is the TTL.\"}");
      }
    }
    return sb.append("]}").toString();
  }

  private static int indexOf(String replicaId) {
    for (int i = 0; i < BACKENDS.size(); i++) {
      if (replicaId.equals("127.0.0.1:" + BACKENDS.get(i).port())) {
        return i;
      }
    }
    throw new AssertionError("no backend " + replicaId);
  }

  private static int arrivedTotal() {
    return BACKENDS.stream().mapToInt(FakeVllmBackend::arrived).sum();
  }

  /** Polls {@code condition} for up to 10 s, running {@code nudge} between polls. */
  private static void await(String what, BooleanSupplier condition, java.util.function.IntSupplier nudge)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for: " + what);
      }
      nudge.getAsInt();
      Thread.sleep(20);
    }
  }
}
