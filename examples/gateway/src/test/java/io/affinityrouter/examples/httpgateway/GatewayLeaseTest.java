package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.examples.fakevllm.FakeVllmConfig;
import io.affinityrouter.examples.json.Json;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Every routed request's lease is closed on every way a request can end: each failure path, then
 * the count of leases and of requests in flight per backend is back to 0.
 */
class GatewayLeaseTest {
  private static final String CHAT = "/v1/chat/completions";
  private final ChatClient client = new ChatClient();
  private TestFleet fleet;

  @AfterEach
  void close() {
    if (fleet != null) {
      fleet.close();
    }
  }

  private static void released(Gateway g) throws InterruptedException {
    assertThat(TestFleet.await(() -> g.openLeases() == 0)).as("leases released").isTrue();
    for (Replica r : g.replicas()) {
      assertThat(TestFleet.await(() -> g.inFlight(r.id()) == 0)).as("in flight on %s", r.id())
          .isTrue();
    }
    assertThat(TestFleet.await(() -> g.inFlight() == 0)).isTrue();
  }

  @Test
  void aRefusedConnectionIsRoutedAgainAndTheFirstLeaseReleased() throws Exception {
    fleet = TestFleet.start(2, FakeVllmConfig.builder().latencyScale(0));
    Gateway g = fleet.gateway(fleet.config().scrapeInterval(Duration.ofSeconds(30)), null);
    String body = new Conversation("r", TestFleet.MODEL, "hi").next(4, false);
    ChatClient.Reply first = client.post(g.baseUrl(), CHAT, "r", body);
    assertThat(first.status()).isEqualTo(200);
    fleet.backend(first.replica()).close(); // the scraper (every 30 s) does not know yet
    ChatClient.Reply second = client.post(g.baseUrl(), CHAT, "r", body);
    assertThat(second.status()).isEqualTo(200);
    assertThat(second.replica()).isNotEqualTo(first.replica());
    released(g);
  }

  @Test
  void aFailingBackendViewStillReleasesTheLeaseAndAnswers500() throws Exception {
    fleet = TestFleet.start(1, FakeVllmConfig.builder().latencyScale(0));
    AtomicInteger throwsSeen = new AtomicInteger();
    Gateway g = Gateway.start(fleet.config().scrapeInterval(Duration.ofSeconds(30)).build(), null,
        view -> new BackendView() {
          @Override
          public List<Replica> replicas() {
            return view.replicas();
          }

          @Override
          public void markFailed(String replicaId) {
            throwsSeen.incrementAndGet();
            throw new IllegalStateException("view broken");
          }

          @Override
          public boolean hasSnapshot() {
            return view.hasSnapshot();
          }
        });
    fleet.gateways.add(g);
    // one answered request first: the gateway knows the backend and its model (a busy machine
    // may not have read the model list yet, which would make the request below a 503)
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (client.post(g.baseUrl(), CHAT, "warm",
        new Conversation("warm", TestFleet.MODEL, "hi").next(4, false)).status() != 200) {
      assertThat(System.nanoTime() - deadline).as("the backend answered").isNegative();
      Thread.sleep(50);
    }
    fleet.backends.get(0).close();
    ChatClient.Reply r = client.post(g.baseUrl(), CHAT, "x",
        new Conversation("x", TestFleet.MODEL, "hi").next(4, false));
    assertThat(r.status()).isEqualTo(500);
    assertThat(((Map<?, ?>) Json.parseObject(r.body()).get("error")).get("code"))
        .isEqualTo("internal_error");
    assertThat(throwsSeen.get()).isPositive();
    released(g);
  }

  @Test
  void aBackendDyingBeforeItsAnswerGets502AndReleases() throws Exception {
    fleet = TestFleet.start(1, FakeVllmConfig.builder().micros(0, 10_000)); // 10 ms per token
    Gateway g = fleet.gateway(fleet.config().scrapeInterval(Duration.ofSeconds(30)), null);
    CompletableFuture<ChatClient.Reply> reply = CompletableFuture.supplyAsync(() -> {
      try {
        return client.post(g.baseUrl(), CHAT, "dies",
            new Conversation("dies", TestFleet.MODEL, "hi").next(300, false)); // ~3 s
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
    assertThat(TestFleet.await(() -> fleet.backends.get(0).runningRequests() == 1)).isTrue();
    fleet.backends.get(0).close(); // the request reached it: not refused, failed
    ChatClient.Reply r = reply.get(20, TimeUnit.SECONDS);
    assertThat(r.status()).isEqualTo(502);
    assertThat(r.replica()).isEqualTo("vllm-0");
    released(g);
  }

  @Test
  void aClientGoneBeforeAWholeAnswerReleases() throws Exception {
    fleet = TestFleet.start(1, FakeVllmConfig.builder().micros(0, 5_000)); // 5 ms per token
    Gateway g = fleet.gateway(fleet.config(), null);
    byte[] body = new Conversation("gone", TestFleet.MODEL, "hi").next(100, false)
        .getBytes(StandardCharsets.UTF_8);
    try (Socket s = new Socket("127.0.0.1", g.port())) {
      OutputStream out = s.getOutputStream();
      out.write(("POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
          + "Content-Length: " + body.length + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
      out.write(body);
      out.flush();
      assertThat(TestFleet.await(() -> g.openLeases() == 1)).isTrue();
    }
    released(g);
    assertThat(client.post(g.baseUrl(), CHAT, "next",
        new Conversation("next", TestFleet.MODEL, "hi").next(2, false)).status()).isEqualTo(200);
  }

  @Test
  void shutdownWithoutGraceCutsRequestsAndReleasesTheirLeases() throws Exception {
    fleet = TestFleet.start(1, FakeVllmConfig.builder().micros(0, 10_000)); // 10 ms per token
    Gateway g = fleet.gateway(fleet.config(), null);
    CompletableFuture<Integer> slow = CompletableFuture.supplyAsync(() -> {
      try {
        return client.post(g.baseUrl(), CHAT, "cut",
            new Conversation("cut", TestFleet.MODEL, "hi").next(500, true)).status();
      } catch (Exception e) {
        return -1; // the connection was cut: what a client sees when the gateway stops
      }
    });
    assertThat(TestFleet.await(() -> g.openLeases() == 1)).isTrue();
    assertThat(g.shutdown(Duration.ofMillis(1))).isFalse();
    // released by shutdown itself, not by whenever the dropped connection gets noticed
    assertThat(g.openLeases()).as("leases released").isZero();
    assertThat(g.inFlight("vllm-0")).isZero();
    assertThat(slow.get(20, TimeUnit.SECONDS)).isIn(-1, 200);
  }
}
