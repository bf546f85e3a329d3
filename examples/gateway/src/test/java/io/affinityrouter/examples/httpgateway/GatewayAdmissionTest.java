package io.affinityrouter.examples.httpgateway;

import static io.affinityrouter.examples.httpgateway.GatewayObservabilityTest.sample;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.examples.fakevllm.FakeVllmConfig;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A gateway flooded past its fleet holds what the fleet has no room for: held requests are served
 * as slots free, the rest answered {@code 429} with {@code Retry-After} at their deadline, a client
 * that left while held keeps no slot, and {@code /metrics} shows all of it.
 */
class GatewayAdmissionTest {
  private static final String CHAT = "/v1/chat/completions";
  private final ChatClient client = new ChatClient();
  private TestFleet fleet;
  private final ExecutorService callers = Executors.newCachedThreadPool();

  @AfterEach
  void close() {
    callers.shutdownNow();
    if (fleet != null) {
      fleet.close();
    }
  }

  private record Timed(ChatClient.Reply reply, long millis) {}

  @Test
  void floodedPastItsFleetItServesWhatFitsAndAnswersTheRest429WithinTheDeadline()
      throws Exception {
    fleet = TestFleet.start(1, FakeVllmConfig.builder().micros(0, 5_000)); // 5 ms per token
    Duration maxHold = Duration.ofMillis(400);
    Gateway g = fleet.gateway(fleet.config().maxInFlightPerBackend(2).maxHold(maxHold), null);
    int clients = 40;
    ExecutorService pool = Executors.newFixedThreadPool(clients);
    try {
      List<CompletableFuture<Timed>> replies = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        String session = "flood-" + i;
        String body = new Conversation(session, TestFleet.MODEL, "hi").next(20, false);
        replies.add(CompletableFuture.supplyAsync(() -> {
          long t0 = System.nanoTime();
          try {
            ChatClient.Reply r = client.post(g.baseUrl(), CHAT, session, body);
            return new Timed(r, (System.nanoTime() - t0) / 1_000_000);
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        }, pool));
      }
      int served = 0;
      int refused = 0;
      for (CompletableFuture<Timed> f : replies) {
        Timed t = f.get(1, TimeUnit.MINUTES);
        if (t.reply().status() == 200) {
          served++;
        } else {
          assertThat(t.reply().status()).as(t.reply().body()).isEqualTo(429);
          assertThat(t.reply().reason()).isEqualTo(RoutingReason.ALL_AT_LIMIT.name());
          assertThat(t.reply().headers().firstValue("Retry-After")).contains("1");
          // refused at its deadline, not left to wait on: the deadline plus a busy machine's slack
          assertThat(t.millis()).isLessThan(maxHold.toMillis() + 10_000);
          refused++;
        }
      }
      assertThat(served + refused).isEqualTo(clients);
      assertThat(refused).as("40 clients, two slots, 100 ms requests, a 400 ms hold").isPositive();
      assertThat(served).as("more than the two that found a free slot").isGreaterThan(2);
      assertThat(TestFleet.await(() -> g.openLeases() == 0 && g.heldRequests() == 0)).isTrue();

      String m = get(g.baseUrl() + "/metrics");
      assertThat(sample(m, "affinity_router_gateway_held")).isZero();
      assertThat(sample(m, "affinity_router_gateway_hold_wait_seconds_count",
          "outcome=\"admitted\"", "tenant=\"none\"")).isPositive();
      assertThat(sample(m, "affinity_router_gateway_hold_wait_seconds_count",
          "outcome=\"refused\"", "tenant=\"none\"")).isEqualTo(refused);
      assertThat(sample(m, "affinity_router_gateway_refusals_total", "reason=\"all_at_limit\"",
          "tenant=\"none\"")).isEqualTo(refused);
      // the gateway's answers: each refusal a 429
      assertThat(sample(m, "affinity_router_gateway_rejected_total", "status=\"429\""))
          .isEqualTo(refused);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void aClientThatLeftWhileHeldKeepsNoSlot() throws Exception {
    fleet = TestFleet.start(1, FakeVllmConfig.builder().micros(0, 5_000));
    Gateway g = fleet.gateway(fleet.config().maxInFlightPerBackend(1)
        .maxHold(Duration.ofMinutes(2)), null); // the deadline is not what ends it
    CompletableFuture<ChatClient.Reply> running = CompletableFuture.supplyAsync(() -> {
      try {
        return client.post(g.baseUrl(), CHAT, "long",
            new Conversation("long", TestFleet.MODEL, "hi").next(400, false)); // 2 s
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    assertThat(TestFleet.await(() -> g.openLeases() == 1)).isTrue();
    String body = new Conversation("leaves", TestFleet.MODEL, "hi").next(4, false);
    try (Socket s = new Socket("127.0.0.1", URI.create(g.baseUrl()).getPort())) {
      OutputStream out = s.getOutputStream();
      out.write(RawHttp.request("POST", CHAT, body, "x-session-id: leaves"));
      out.flush();
      assertThat(TestFleet.await(() -> g.heldRequests() == 1)).isTrue();
    } // the client closes its connection while held
    assertThat(running.get(1, TimeUnit.MINUTES).status()).isEqualTo(200);
    // Admitted when the slot freed, it found its client gone and released the slot at once.
    assertThat(TestFleet.await(() -> g.heldRequests() == 0 && g.openLeases() == 0)).isTrue();
    String m = get(g.baseUrl() + "/metrics");
    assertThat(sample(m, "affinity_router_gateway_held")).isZero();
    assertThat(client.post(g.baseUrl(), CHAT, "after",
        new Conversation("after", TestFleet.MODEL, "hi").next(4, false)).status()).isEqualTo(200);
  }

  @Test
  void aFirstSendHeldAfterAResendIsAdmittedBeforeIt() throws Exception {
    fleet = TestFleet.start(1, FakeVllmConfig.builder().micros(0, 5_000));
    Gateway g = fleet.gateway(fleet.config().maxInFlightPerBackend(1)
        .maxHold(Duration.ofMinutes(2)), null);
    // one slot, three 2 s requests: each held one runs only once the one before it ended
    CompletableFuture<Long> running = post(g, "long", null);
    assertThat(TestFleet.await(() -> g.openLeases() == 1)).isTrue();
    CompletableFuture<Long> resend = post(g, "resent", "1");
    assertThat(TestFleet.await(() -> g.heldRequests() == 1)).isTrue();
    CompletableFuture<Long> first = post(g, "first", "0");
    assertThat(TestFleet.await(() -> g.heldRequests() == 2)).isTrue();

    long runningDone = running.get(1, TimeUnit.MINUTES);
    long firstDone = first.get(1, TimeUnit.MINUTES);
    long resendDone = resend.get(1, TimeUnit.MINUTES);
    assertThat(firstDone).isGreaterThan(runningDone);
    assertThat(resendDone).as("the resend, held first, admitted after the first send")
        .isGreaterThan(firstDone);
  }

  /** Posts a 2 s request; completes with when its 200 arrived (nanoTime). */
  private CompletableFuture<Long> post(Gateway g, String session, String retryCount) {
    String body = new Conversation(session, TestFleet.MODEL, "hi").next(400, false);
    return CompletableFuture.supplyAsync(() -> {
      try {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(g.baseUrl() + CHAT))
            .timeout(Duration.ofMinutes(1)).header("Content-Type", "application/json")
            .header(GatewayConfig.DEFAULT_SESSION_HEADER, session)
            .POST(HttpRequest.BodyPublishers.ofString(body));
        if (retryCount != null) {
          b.header(RoutingRequest.RETRY_COUNT_HEADER, retryCount);
        }
        HttpResponse<String> r = client.http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return System.nanoTime();
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }, callers);
  }

  private String get(String url) throws Exception {
    return client.http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20))
        .GET().build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8)).body();
  }
}
