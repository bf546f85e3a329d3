package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Proxying holds no thread per stream: 200 streams open at once through a gateway whose server has
 * 16 threads (each stream has relayed its first event, the backend holds the rest) occupy none of
 * the gateway's threads, and all of them then finish.
 */
class GatewayStreamsTest {
  private static final String CHAT = "/v1/chat/completions";
  private static final int STREAMS = 200;
  /** The server's pool, far below the streams: each stream needs a thread only while it moves. */
  private static final int MAX_THREADS = 16;
  /** The gateway's request path: a thread inside one of these is one the proxying holds. */
  private static final Set<String> REQUEST_PATH = Set.of(Upstream.class.getName(),
      ProxyHandler.class.getName(), Exchange.class.getName());

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

  /** Collects a streamed body's lines; counts the first event down. */
  private static final class Lines implements Flow.Subscriber<String> {
    final ConcurrentLinkedQueue<String> lines = new ConcurrentLinkedQueue<>();
    private final CountDownLatch firstEvents;
    private boolean first = true;

    Lines(CountDownLatch firstEvents) {
      this.firstEvents = firstEvents;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
      s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(String line) {
      lines.add(line);
      if (first && line.startsWith("data: ")) {
        first = false;
        firstEvents.countDown();
      }
    }

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onComplete() {}
  }

  private static boolean onRequestPath(StackTraceElement[] stack) {
    for (StackTraceElement e : stack) {
      String c = e.getClassName();
      int inner = c.indexOf('$');
      if (REQUEST_PATH.contains(inner < 0 ? c : c.substring(0, inner))) {
        return true;
      }
    }
    return false;
  }

  @Test
  void twoHundredOpenStreamsHoldNoGatewayThreadAndAllFinish() throws Exception {
    backend = GatedBackend.start();
    g = Gateway.start(GatewayConfig.builder()
        .listen(new InetSocketAddress("127.0.0.1", 0))
        .scrapeInterval(Duration.ofMillis(20))
        .maxThreads(MAX_THREADS)
        .backend(TestFleet.id(0), URI.create(backend.baseUrl()))
        .build());
    assertThat(TestFleet.await(() -> g.replicas().stream()
        .allMatch(r -> r.models().containsKey(TestFleet.MODEL)))).as("model scraped").isTrue();
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    CountDownLatch firstEvents = new CountDownLatch(STREAMS);
    List<Lines> bodies = new ArrayList<>();
    List<CompletableFuture<HttpResponse<Void>>> replies = new ArrayList<>();
    for (int i = 0; i < STREAMS; i++) {
      Lines lines = new Lines(firstEvents);
      bodies.add(lines);
      replies.add(http.sendAsync(HttpRequest.newBuilder(URI.create(g.baseUrl() + CHAT))
              .timeout(Duration.ofSeconds(60))
              .header("Content-Type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString(
                  new Conversation("s" + i, TestFleet.MODEL, "hi").next(4, true)))
              .build(),
          HttpResponse.BodyHandlers.fromLineSubscriber(lines)));
    }
    assertThat(firstEvents.await(120, TimeUnit.SECONDS)).as("every stream's first event relayed")
        .isTrue();
    assertThat(TestFleet.await(() -> backend.waiting() == STREAMS)).as("all held").isTrue();
    assertThat(g.inFlight()).isEqualTo(STREAMS);
    assertThat(g.openLeases()).isEqualTo(STREAMS);

    Map<Thread, StackTraceElement[]> threads = Thread.getAllStackTraces();
    long holding = threads.values().stream().filter(GatewayStreamsTest::onRequestPath).count();
    long gatewayThreads = threads.keySet().stream()
        .filter(t -> t.getName().startsWith("gateway-")).count();
    // with a thread per stream, each would be one of them, waiting on its backend
    assertThat(holding).as("threads inside the gateway's request path, %d streams open", STREAMS)
        .isLessThan(10);
    assertThat(gatewayThreads).as("the gateway's threads, %d streams open", STREAMS)
        .isLessThan(STREAMS / 4);

    backend.open();
    for (int i = 0; i < STREAMS; i++) {
      HttpResponse<Void> r = replies.get(i).get(60, TimeUnit.SECONDS);
      assertThat(r.statusCode()).isEqualTo(200);
      assertThat(bodies.get(i).lines).as("stream %d", i).contains("data: [DONE]");
    }
    assertThat(TestFleet.await(() -> g.openLeases() == 0)).as("leases released").isTrue();
    assertThat(TestFleet.await(() -> g.inFlight() == 0)).isTrue();
  }
}
