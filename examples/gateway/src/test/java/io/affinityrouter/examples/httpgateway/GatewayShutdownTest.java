package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.examples.json.Json;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Graceful stop ({@link Gateway#shutdown}): requests in flight to a backend that has not answered
 * yet finish with their full answer, however long the client's connection stays silent; a new
 * connection is refused and a new request on an open one gets {@code 503 shutting_down}.
 */
class GatewayShutdownTest {
  private static final String CHAT = "/v1/chat/completions";
  private final ChatClient client = new ChatClient();
  private GatedBackend backend;
  private Gateway g;

  @AfterEach
  void close() {
    if (g != null) {
      g.shutdown(Duration.ofMillis(200));
    }
    if (backend != null) {
      backend.close();
    }
  }

  private static String chat(String session, boolean stream) {
    return new Conversation(session, TestFleet.MODEL, "hi").next(4, stream);
  }

  private CompletableFuture<ChatClient.Reply> post(String session, boolean stream) {
    return CompletableFuture.supplyAsync(() -> {
      try {
        return client.post(g.baseUrl(), CHAT, session, chat(session, stream));
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    });
  }

  private static boolean refused(int port) {
    try (Socket s = new Socket("127.0.0.1", port)) {
      return false;
    } catch (ConnectException e) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  @Test
  void inFlightRequestsFinishDuringStopAndNewOnesAreRefused() throws Exception {
    backend = GatedBackend.start();
    g = Gateway.start(GatewayConfig.builder()
        .listen(new InetSocketAddress("127.0.0.1", 0))
        .scrapeInterval(Duration.ofMillis(20))
        .backend(TestFleet.id(0), URI.create(backend.baseUrl()))
        .build());
    assertThat(TestFleet.await(() -> g.replicas().stream()
        .allMatch(r -> r.models().containsKey(TestFleet.MODEL)))).as("model scraped").isTrue();
    try (Socket open = new Socket("127.0.0.1", g.port())) { // a keep-alive connection from before
      open.setSoTimeout(30_000);
      open.getOutputStream().write("GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n"
          .getBytes(StandardCharsets.UTF_8));
      assertThat(RawHttp.read(open.getInputStream()).status()).isEqualTo(200);

      CompletableFuture<ChatClient.Reply> whole = post("whole", false);
      CompletableFuture<ChatClient.Reply> stream = post("stream", true);
      assertThat(TestFleet.await(() -> backend.waiting() == 2)).as("both at the backend").isTrue();
      CompletableFuture<Boolean> stopped = CompletableFuture.supplyAsync(
          () -> g.shutdown(Duration.ofSeconds(60)));

      assertThat(TestFleet.await(() -> refused(g.port()))).as("listener closed").isTrue();
      open.getOutputStream().write(RawHttp.request("POST", CHAT, chat("late", false),
          "x-session-id: late"));
      RawHttp.Answer late = RawHttp.read(open.getInputStream());
      assertThat(late.status()).as(late.head()).isEqualTo(503);
      assertThat(late.header("Retry-After")).isEqualTo("1");
      assertThat(late.header("Connection")).isEqualToIgnoringCase("close");
      assertThat(((Map<?, ?>) Json.parseObject(late.body()).get("error")).get("code"))
          .isEqualTo("shutting_down");
      assertThat(open.getInputStream().read()).as("connection closed after the 503").isEqualTo(-1);

      // the two clients' connections stay silent past the idle timeout Jetty applies at shutdown
      Thread.sleep(1_500);
      assertThat(whole.isDone()).as("whole answer still awaited").isFalse();
      assertThat(stream.isDone()).as("stream still open").isFalse();
      assertThat(stopped.isDone()).as("stop waits for them").isFalse();
      assertThat(g.openLeases()).isEqualTo(2);

      backend.open();
      ChatClient.Reply w = whole.get(30, TimeUnit.SECONDS);
      assertThat(w.status()).as(w.body()).isEqualTo(200);
      assertThat(w.body()).contains("\"completion_tokens\":2");
      ChatClient.Reply s = stream.get(30, TimeUnit.SECONDS);
      assertThat(s.status()).as(s.body()).isEqualTo(200);
      assertThat(s.body()).endsWith("data: [DONE]\n\n");
      assertThat(stopped.get(30, TimeUnit.SECONDS)).as("drained within the grace").isTrue();
    }
    assertThat(TestFleet.await(() -> g.openLeases() == 0)).as("leases released").isTrue();
    assertThat(g.inFlight()).isZero();
  }
}
