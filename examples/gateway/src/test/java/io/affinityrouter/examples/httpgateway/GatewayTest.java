package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.ModelState;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.examples.fakevllm.FakeVllmConfig;
import io.affinityrouter.examples.fakevllm.FakeVllmServer;
import io.affinityrouter.examples.json.Json;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** One gateway (in-memory bindings) in front of fake vLLM backends, over real sockets. */
class GatewayTest {
  private static final String CHAT = "/v1/chat/completions";
  private final ChatClient client = new ChatClient();
  private TestFleet fleet;

  @AfterEach
  void close() {
    if (fleet != null) {
      fleet.close();
    }
  }

  private Gateway start(int backends, FakeVllmConfig.Builder config) {
    fleet = TestFleet.start(backends, config);
    return fleet.gateway(fleet.config(), null);
  }

  @Test
  void scrapesEveryBackendThroughTheCoreParser() {
    Gateway g = start(3, FakeVllmConfig.builder().latencyScale(0));
    assertThat(g.replicas()).hasSize(3).allSatisfy(r -> {
      assertThat(r.health()).isEqualTo(ReplicaHealth.HEALTHY);
      assertThat(r.models()).containsEntry(TestFleet.MODEL, ModelState.ACTIVE);
      assertThat(r.load().kvCapacityTokens())
          .isEqualTo(16L * FakeVllmConfig.DEFAULT_NUM_GPU_BLOCKS);
    });
  }

  @Test
  void sessionTurnsStayOnOneBackendAndHitItsPrefixCache() throws Exception {
    Gateway g = start(3, FakeVllmConfig.builder().latencyScale(0.01));
    Set<String> used = new HashSet<>();
    for (int s = 0; s < 6; s++) {
      Conversation c = new Conversation("s-" + s, TestFleet.MODEL,
          Conversation.systemPrompt(s, 2000));
      String replica = null;
      for (int turn = 1; turn <= 5; turn++) {
        ChatClient.Reply r = client.post(g.baseUrl(), CHAT, c.sessionId(), c.next(8, false));
        assertThat(r.status()).isEqualTo(200);
        if (turn == 1) {
          replica = r.replica();
          assertThat(r.reason()).isEqualTo(RoutingReason.SESSION_CLAIMED.name());
        } else {
          assertThat(r.replica()).isEqualTo(replica);
          assertThat(r.reason()).isEqualTo(RoutingReason.SESSION_AFFINITY.name());
          Map<?, ?> usage = (Map<?, ?>) Json.parseObject(r.body()).get("usage");
          long cached = (Long) ((Map<?, ?>) usage.get("prompt_tokens_details"))
              .get("cached_tokens");
          long prompt = (Long) usage.get("prompt_tokens");
          assertThat(cached).as("turn %d of %s", turn, c.sessionId())
              .isGreaterThan(prompt * 8 / 10);
        }
        c.answeredFrom(r.body());
      }
      used.add(replica);
    }
    assertThat(used).as("new sessions spread by load").hasSizeGreaterThan(1);
    assertThat(TestFleet.await(() -> g.openLeases() == 0)).isTrue();
  }

  @Test
  void streamingArrivesIntactWithRoutingHeaders() throws Exception {
    Gateway g = start(2, FakeVllmConfig.builder().micros(10, 500));
    Conversation c = new Conversation("stream-1", TestFleet.MODEL, "be brief");
    String body = c.next(40, true);
    ChatClient.Reply viaGateway = client.post(g.baseUrl(), CHAT, c.sessionId(), body);
    assertThat(viaGateway.status()).isEqualTo(200);
    assertThat(viaGateway.headers().firstValue("Content-Type")).hasValueSatisfying(
        t -> assertThat(t).startsWith("text/event-stream"));
    FakeVllmServer backend = fleet.backend(viaGateway.replica());
    // The same request straight to the backend: byte for byte the same events (ids aside).
    HttpResponse<String> direct = client.http.send(HttpRequest.newBuilder(
            URI.create(backend.baseUrl() + CHAT)).POST(HttpRequest.BodyPublishers.ofString(body))
        .build(), HttpResponse.BodyHandlers.ofString());
    String[] a = viaGateway.body().split("\n\n");
    String[] b = direct.body().split("\n\n");
    assertThat(a).hasSize(42).hasSameSizeAs(b); // role chunk, 40 tokens, [DONE]
    for (int i = 0; i < a.length; i++) {
      assertThat(stripVolatile(a[i])).isEqualTo(stripVolatile(b[i]));
    }
    assertThat(a[a.length - 1]).isEqualTo("data: [DONE]");
    assertThat(TestFleet.await(() -> g.openLeases() == 0)).isTrue();
  }

  private static String stripVolatile(String event) {
    return event.replaceAll("\"id\":\"[^\"]*\"", "").replaceAll("\"created\":\\d+", "");
  }

  @Test
  void streamsCarryAUsageChunkOnlyWhenTheClientAsksForIt() throws Exception {
    Gateway g = start(1, FakeVllmConfig.builder().latencyScale(0));
    String plain = new Conversation("u", TestFleet.MODEL, "hi").next(3, true);
    String withUsage = plain.replaceFirst("\\{",
        "{\"stream_options\":{\"include_usage\":true},");
    ChatClient.Reply asked = client.post(g.baseUrl(), CHAT, "u", withUsage);
    String[] events = asked.body().split("\n\n");
    assertThat(events[events.length - 1]).isEqualTo("data: [DONE]");
    Map<?, ?> last = Json.parseObject(events[events.length - 2].substring("data: ".length()));
    assertThat(((Map<?, ?>) last.get("usage")).get("completion_tokens")).isEqualTo(3L);
    ChatClient.Reply notAsked = client.post(g.baseUrl(), CHAT, "u", plain);
    assertThat(notAsked.status()).isEqualTo(200);
    assertThat(notAsked.body()).doesNotContain("\"usage\"").endsWith("data: [DONE]\n\n");
    assertThat(TestFleet.await(() -> g.openLeases() == 0)).isTrue();
  }

  @Test
  void clientDisconnectingMidStreamReleasesTheLease() throws Exception {
    Gateway g = start(1, FakeVllmConfig.builder().micros(0, 10_000)); // 10 ms per token
    String body = new Conversation("gone-1", TestFleet.MODEL, "hello").next(1000, true);
    URI uri = URI.create(g.baseUrl());
    try (Socket socket = new Socket(uri.getHost(), uri.getPort())) {
      OutputStream out = socket.getOutputStream();
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      out.write(("POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          + "x-session-id: gone-1\r\nContent-Length: " + bytes.length + "\r\n\r\n")
          .getBytes(StandardCharsets.UTF_8));
      out.write(bytes);
      out.flush();
      InputStream in = socket.getInputStream();
      String head = readUntil(in, "data: ");
      assertThat(head).startsWith("HTTP/1.1 200").containsIgnoringCase("x-affinity-replica: vllm-0");
      assertThat(g.openLeases()).isEqualTo(1);
      assertThat(fleet.backends.get(0).runningRequests()).isEqualTo(1);
    }
    assertThat(TestFleet.await(() -> g.openLeases() == 0)).as("lease released").isTrue();
    FakeVllmServer backend = fleet.backends.get(0);
    assertThat(TestFleet.await(() -> backend.abortedRequests() == 1)).as("upstream aborted")
        .isTrue();
    assertThat(backend.runningRequests()).isZero();
    assertThat(g.inFlight()).isZero();
  }

  private static String readUntil(InputStream in, String marker) throws Exception {
    StringBuilder sb = new StringBuilder();
    while (!sb.toString().contains(marker)) {
      int c = in.read();
      if (c < 0) {
        break;
      }
      sb.append((char) c);
    }
    return sb.toString();
  }

  @Test
  void malformedJsonGets400WithAClearMessage() throws Exception {
    Gateway g = start(1, FakeVllmConfig.builder().latencyScale(0));
    ChatClient.Reply r = client.post(g.baseUrl(), CHAT, "s", "{\"messages\": [ {\"role\": ");
    assertThat(r.status()).isEqualTo(400);
    Map<?, ?> error = (Map<?, ?>) Json.parseObject(r.body()).get("error");
    assertThat(error.get("message")).isEqualTo(
        "malformed request body: unexpected end of input, expected a value at offset 24");
    assertThat(error.get("type")).isEqualTo("invalid_request_error");
    ChatClient.Reply noMessages = client.post(g.baseUrl(), CHAT, "s",
        "{\"model\":\"" + TestFleet.MODEL + "\"}");
    assertThat(noMessages.status()).isEqualTo(400);
    assertThat(noMessages.body()).contains("messages: missing");
    ChatClient.Reply longSession = client.post(g.baseUrl(), CHAT, "x".repeat(300),
        "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
    assertThat(longSession.status()).isEqualTo(400);
    assertThat(longSession.body()).contains("sessionId");
    assertThat(client.post(g.baseUrl(), "/v1/embeddings", null, "{}").status()).isEqualTo(404);
    assertThat(TestFleet.await(() -> g.openLeases() == 0)).isTrue();
  }

  @Test
  void headersAreForwardedBothWays() throws Exception {
    Gateway g = start(1, FakeVllmConfig.builder().latencyScale(0).apiKey("k-123"));
    String body = new Conversation("auth", TestFleet.MODEL, "hi").next(2, false);
    ChatClient.Reply refused = client.post(g.baseUrl(), CHAT, "auth", body);
    assertThat(refused.status()).isEqualTo(401);
    assertThat(refused.replica()).isEqualTo("vllm-0");
    HttpResponse<String> ok = client.http.send(HttpRequest.newBuilder(URI.create(g.baseUrl()
            + CHAT)).header("Authorization", "Bearer k-123").header("x-session-id", "auth")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(ok.headers().firstValue("Content-Type")).contains("application/json");
    assertThat(TestFleet.await(() -> g.openLeases() == 0)).isTrue();
  }

  @Test
  void completionsEndpointAndUsageAreProxied() throws Exception {
    Gateway g = start(2, FakeVllmConfig.builder().latencyScale(0));
    ChatClient.Reply r = client.post(g.baseUrl(), "/v1/completions", null,
        "{\"prompt\":\"The quick brown fox\",\"max_tokens\":6}");
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.reason()).isEqualTo(RoutingReason.BEST_SCORE.name());
    assertThat(((Map<?, ?>) Json.parseObject(r.body()).get("usage")).get("completion_tokens"))
        .isEqualTo(6L);
  }

  @Test
  void sleepingModelGets503WithRetryAfterAndIsWoken() throws Exception {
    Gateway g = start(2, FakeVllmConfig.builder().latencyScale(0));
    for (FakeVllmServer b : fleet.backends) {
      client.http.send(HttpRequest.newBuilder(URI.create(b.baseUrl() + "/sleep?level=1"))
          .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.discarding());
    }
    assertThat(TestFleet.await(() -> g.replicas().stream().allMatch(
        r -> r.models().get(TestFleet.MODEL) == ModelState.SLEEPING))).isTrue();
    String body = new Conversation("sleepy", TestFleet.MODEL, "hi").next(4, false);
    ChatClient.Reply r = client.post(g.baseUrl(), CHAT, "sleepy", body);
    assertThat(r.status()).isEqualTo(503);
    assertThat(r.reason()).isEqualTo(RoutingReason.MODEL_WAKING.name());
    assertThat(r.headers().firstValue("Retry-After")).hasValueSatisfying(
        v -> assertThat(Integer.parseInt(v)).isPositive());
    assertThat(TestFleet.await(() -> fleet.backends.stream().anyMatch(b -> !b.isSleeping())))
        .as("one backend woken").isTrue();
    assertThat(g.wakeRequestsSent()).isPositive();
    assertThat(TestFleet.await(() -> g.replicas().stream().anyMatch(
        x -> x.models().get(TestFleet.MODEL) == ModelState.ACTIVE))).isTrue();
    assertThat(client.post(g.baseUrl(), CHAT, "sleepy", body).status()).isEqualTo(200);
  }

  @Test
  void deadBackendGets502AndIsMarkedUnhealthy() throws Exception {
    Gateway g = start(1, FakeVllmConfig.builder().latencyScale(0));
    String body = new Conversation("d", TestFleet.MODEL, "hi").next(4, false);
    assertThat(client.post(g.baseUrl(), CHAT, "d", body).status()).isEqualTo(200);
    fleet.backends.get(0).close();
    ChatClient.Reply r = client.post(g.baseUrl(), CHAT, "d", body);
    // Either the request found it dead (502) or the scraper did first (no replica: 503).
    assertThat(r.status()).isIn(502, 503);
    assertThat(TestFleet.await(() -> g.replicas().get(0).health() == ReplicaHealth.UNHEALTHY))
        .isTrue();
    ChatClient.Reply after = client.post(g.baseUrl(), CHAT, "d", body);
    assertThat(after.status()).isEqualTo(503);
    assertThat(after.reason()).isEqualTo(RoutingReason.NO_REPLICA.name());
    assertThat(TestFleet.await(() -> g.openLeases() == 0)).isTrue();
  }

  @Test
  void allAtLimitGets429WithRetryAfterAtOnceWhenNothingIsHeld() throws Exception {
    fleet = TestFleet.start(1, FakeVllmConfig.builder().micros(0, 5_000));
    Gateway g = fleet.gateway(fleet.config().maxInFlightPerBackend(1).maxHold(Duration.ZERO),
        null);
    CompletableFuture<ChatClient.Reply> slow = CompletableFuture.supplyAsync(() -> {
      try {
        return client.post(g.baseUrl(), CHAT, "a",
            new Conversation("a", TestFleet.MODEL, "hi").next(60, true));
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    assertThat(TestFleet.await(() -> g.openLeases() == 1)).isTrue();
    ChatClient.Reply r = client.post(g.baseUrl(), CHAT, "b",
        new Conversation("b", TestFleet.MODEL, "hi").next(4, false));
    assertThat(r.status()).isEqualTo(429);
    assertThat(r.reason()).isEqualTo(RoutingReason.ALL_AT_LIMIT.name());
    assertThat(r.headers().firstValue("Retry-After")).contains("1");
    assertThat(slow.get(10, TimeUnit.SECONDS).status()).isEqualTo(200);
    assertThat(TestFleet.await(() -> g.openLeases() == 0)).isTrue();
    assertThat(client.post(g.baseUrl(), CHAT, "b",
        new Conversation("b", TestFleet.MODEL, "hi").next(4, false)).status()).isEqualTo(200);
  }

  @Test
  void backendDyingMidStreamEndsTheStreamWithAnErrorEvent() throws Exception {
    Gateway g = start(1, FakeVllmConfig.builder().micros(0, 10_000)); // 10 ms per token
    String body = new Conversation("cut", TestFleet.MODEL, "hi").next(500, true);
    HttpResponse<InputStream> r = client.http.send(HttpRequest.newBuilder(
            URI.create(g.baseUrl() + CHAT)).header("x-session-id", "cut")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofInputStream());
    assertThat(r.statusCode()).as(r.headers().map().toString()).isEqualTo(200);
    try (InputStream in = r.body()) {
      assertThat(readUntil(in, "\n\n")).startsWith("data: ");
      fleet.backends.get(0).close();
      String rest = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      assertThat(rest).contains("\"code\":\"backend_failed\"").doesNotContain("[DONE]");
    }
    assertThat(TestFleet.await(() -> g.openLeases() == 0)).isTrue();
    assertThat(g.replicas().get(0).health()).isEqualTo(ReplicaHealth.UNHEALTHY);
  }

  @Test
  void aBackendThatDoesNotAnswerInTimeGets504() throws Exception {
    fleet = TestFleet.start(1, FakeVllmConfig.builder().micros(0, 20_000)); // 20 ms per token
    Gateway g = fleet.gateway(fleet.config().responseTimeout(java.time.Duration.ofMillis(200)),
        null);
    ChatClient.Reply r = client.post(g.baseUrl(), CHAT, "late",
        new Conversation("late", TestFleet.MODEL, "hi").next(100, false)); // ~2 s
    assertThat(r.status()).isEqualTo(504);
    assertThat(r.replica()).isEqualTo("vllm-0");
    assertThat(r.body()).contains("sent no response within 200 ms");
    assertThat(TestFleet.await(() -> g.openLeases() == 0)).isTrue(); // closed in a finally
  }

  @Test
  void gracefulShutdownFinishesInFlightAndRefusesNewConnections() throws Exception {
    Gateway g = start(1, FakeVllmConfig.builder().micros(0, 5_000)); // 5 ms per token
    String body = new Conversation("slow", TestFleet.MODEL, "hi").next(100, true); // ~0.5 s
    CompletableFuture<ChatClient.Reply> inFlight = CompletableFuture.supplyAsync(() -> {
      try {
        return client.post(g.baseUrl(), CHAT, "slow", body);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    assertThat(TestFleet.await(() -> g.openLeases() == 1)).isTrue();
    CompletableFuture<Boolean> stopped = CompletableFuture.supplyAsync(
        () -> g.shutdown(java.time.Duration.ofSeconds(5)));
    URI uri = URI.create(g.baseUrl());
    assertThat(TestFleet.await(() -> {
      try (Socket s = new Socket(uri.getHost(), uri.getPort())) {
        return false;
      } catch (ConnectException e) {
        return true;
      } catch (java.io.IOException e) {
        return false;
      }
    })).as("listener closed while a request is in flight").isTrue();
    assertThat(inFlight.isDone()).isFalse();
    ChatClient.Reply r = inFlight.get(10, TimeUnit.SECONDS);
    assertThat(r.status()).isEqualTo(200);
    assertThat(r.body()).endsWith("data: [DONE]\n\n");
    assertThat(r.body().split("\n\n")).hasSize(102);
    assertThat(stopped.get(10, TimeUnit.SECONDS)).isTrue();
    assertThat(TestFleet.await(() -> g.openLeases() == 0)).isTrue();
    assertThat(List.of(g.inFlight())).containsExactly(0);
  }
}
