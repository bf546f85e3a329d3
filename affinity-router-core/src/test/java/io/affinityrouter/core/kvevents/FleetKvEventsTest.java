package io.affinityrouter.core.kvevents;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.core.engine.FleetView;
import io.affinityrouter.spi.ReplicaDiscovery;
import io.affinityrouter.spi.ReplicaEndpoint;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A fleet view given a sink subscribes to each endpoint's KV events from start to close, and follows
 * its discovery: a replica that leaves loses its subscription, one that arrives gets one. The
 * engines' {@code /metrics} are not served here (their scrapes fail), which KV events do not need.
 */
class FleetKvEventsTest {
  private static final Duration PATIENCE = Await.PATIENCE;
  private static final URI NO_METRICS = URI.create("http://127.0.0.1:9");

  private final RecordingSink sink = new RecordingSink();
  private final List<AutoCloseable> closeables = new ArrayList<>();

  @AfterEach
  void closeAll() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
  }

  private <T extends AutoCloseable> T closing(T c) {
    closeables.add(c);
    return c;
  }

  private static ReplicaEndpoint endpoint(String id, TestPublisher pub) {
    return ReplicaEndpoint.builder(id, NO_METRICS).model("m")
        .kvEventsUri(URI.create(pub.endpoint()))
        .kvEventsReplayUri(URI.create(pub.replayEndpoint())).build();
  }

  private static byte[] block(long hash) {
    return Batches.arrays().stored(new long[] {hash}, null,
        IntStream.range(0, 16).map(i -> (int) hash + i).toArray(), 16).build();
  }

  private static String storedCall(String replica, long hash) {
    return RecordingSink.stored(replica, "m", null, new long[] {hash},
        IntStream.range(0, 16).map(i -> (int) hash + i).toArray(), 16);
  }

  /** Publishes the block until the sink has it (a SUB socket misses what precedes its connect). */
  private void publishUntilStored(TestPublisher pub, String replica, long hash) {
    String call = storedCall(replica, hash);
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (!sink.calls().contains(call)) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("never stored " + call + "; have " + sink.calls());
      }
      pub.publish(block(hash));
      long until = System.nanoTime() + 20_000_000;
      while (!sink.calls().contains(call) && System.nanoTime() - until < 0) {
        Thread.yield();
      }
    }
  }

  @Test
  void eventsOfEachEndpointReachTheSinkUnderItsReplicaIdFromStartToClose() {
    TestPublisher a = closing(TestPublisher.start());
    TestPublisher b = closing(TestPublisher.start());
    FleetView fleet = closing(FleetView.builder()
        .endpoint(endpoint("a", a)).endpoint(endpoint("b", b))
        .endpoint(ReplicaEndpoint.builder("c", NO_METRICS).build()) // no KV events
        .build()).kvEvents(sink);
    assertThat(fleet.kvEventStats()).as("nothing before start").isEmpty();

    fleet.start();
    assertThat(fleet.kvEventStats()).containsOnlyKeys("a", "b");
    publishUntilStored(a, "a", 100);
    publishUntilStored(b, "b", 200);
    assertThat(sink.calls()).contains(storedCall("a", 100), storedCall("b", 200));
    assertThat(fleet.kvEventStats().get("a").events()).isPositive();

    fleet.close();
    assertThat(fleet.kvEventStats()).isEmpty();
    int seen = sink.size();
    for (int i = 0; i < 20; i++) {
      a.publish(block(300));
    }
    assertThat(sink.size()).as("no subscriber after close").isEqualTo(seen);
  }

  @Test
  void anEndpointNamingNoModelStoresItsBlocksForTheModelItsScrapeShows() throws Exception {
    String model = "Qwen/Qwen3-0.6B"; // the captured exposition's model_name
    byte[] metrics = java.nio.file.Files.readAllBytes(java.nio.file.Path.of(
        "../../shared/fixtures/metrics/vllm-v1-0.26.0-llmd-router-none.prom"));
    com.sun.net.httpserver.HttpServer server = com.sun.net.httpserver.HttpServer.create(
        new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/metrics", ex -> {
      ex.sendResponseHeaders(200, metrics.length);
      try (ex) {
        ex.getResponseBody().write(metrics);
      }
    });
    server.start();
    closeables.add(() -> server.stop(0));
    TestPublisher pub = closing(TestPublisher.start());
    FleetView fleet = closing(FleetView.builder().endpoint(ReplicaEndpoint.builder("a",
        URI.create("http://127.0.0.1:" + server.getAddress().getPort()))
        .kvEventsUri(URI.create(pub.endpoint())).build()).build()).kvEvents(sink);
    fleet.scrapeNow().toCompletableFuture().get(PATIENCE.toSeconds(),
        java.util.concurrent.TimeUnit.SECONDS);
    fleet.start();

    String call = RecordingSink.stored("a", model, null, new long[] {100},
        IntStream.range(0, 16).map(i -> 100 + i).toArray(), 16);
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (!sink.calls().contains(call)) {
      assertThat(System.nanoTime() - deadline).as("never stored %s; have %s", call, sink.calls())
          .isNegative();
      pub.publish(block(100));
      Thread.sleep(20);
    }
  }

  @Test
  void aSinkIsGivenOnceBeforeStart() {
    FleetView fleet = closing(FleetView.builder()
        .endpoint(ReplicaEndpoint.builder("c", NO_METRICS).build()).build());
    fleet.kvEvents(sink);
    org.assertj.core.api.Assertions.assertThatIllegalStateException()
        .isThrownBy(() -> fleet.kvEvents(sink));
    fleet.start();
    org.assertj.core.api.Assertions.assertThatIllegalStateException()
        .isThrownBy(() -> fleet.kvEvents(new RecordingSink()));
  }

  @Test
  void subscriptionsFollowTheDiscovery() {
    TestPublisher a = closing(TestPublisher.start());
    TestPublisher b = closing(TestPublisher.start());
    AtomicReference<List<ReplicaEndpoint>> now = new AtomicReference<>(List.of(endpoint("a", a)));
    AtomicReference<Consumer<List<ReplicaEndpoint>>> push = new AtomicReference<>();
    ReplicaDiscovery discovery = new ReplicaDiscovery() {
      @Override
      public List<ReplicaEndpoint> endpoints() {
        return now.get();
      }

      @Override
      public AutoCloseable watch(Consumer<List<ReplicaEndpoint>> onChange) {
        push.set(onChange);
        return () -> push.set(null);
      }
    };
    FleetView fleet = closing(FleetView.builder().discovery(discovery)
        .discoveryInterval(Duration.ofHours(1)).build()).kvEvents(sink);
    fleet.start();
    fleet.scrapeNow().toCompletableFuture().join(); // the first poll has applied "a"
    Await.until("a subscribed", () -> fleet.kvEventStats().containsKey("a"));
    publishUntilStored(a, "a", 100);

    now.set(List.of(endpoint("b", b)));
    push.get().accept(now.get());
    Await.until("a replaced by b",
        () -> fleet.kvEventStats().keySet().equals(java.util.Set.of("b")));
    publishUntilStored(b, "b", 200);
    int seen = sink.size();
    for (int i = 0; i < 20; i++) {
      a.publish(block(300));
    }
    publishUntilStored(b, "b", 201); // b's later block arrives; a's, published before it, never
    assertThat(sink.calls().subList(seen, sink.size())).noneMatch(c -> c.contains("300"));
  }
}
