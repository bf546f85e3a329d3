package io.affinityrouter.core.engine;

import static io.affinityrouter.core.engine.EngineServer.fixture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.spi.ReplicaEndpoint;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An engine that answers {@code /metrics} with 300 MB (a valid exposition that never ends in
 * time, streamed, never held in memory by the server) costs the gateway at most the response
 * bound per scrape: its scrapes fail, it turns unhealthy, and the other replica keeps being
 * scraped with fresh load. A discovery plugin that throws an error does not end the polls.
 */
class FleetHostileEngineTest {
  private static final long HUGE = 300L << 20;
  private final EngineServer healthy = new EngineServer().metrics(fixture(EngineServer.VLLM_V1));
  private final AtomicLong written = new AtomicLong();
  private HttpServer hostile;
  private FleetView fleet;

  @AfterEach
  void tearDown() {
    if (fleet != null) {
      fleet.close();
    }
    healthy.close();
    if (hostile != null) {
      hostile.stop(0);
    }
  }

  private URI startHostile() throws IOException {
    hostile = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    hostile.setExecutor(Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "hostile-engine");
      t.setDaemon(true);
      return t;
    }));
    byte[] line = "vllm:num_requests_running{model_name=\"m\"} 1.0\n"
        .getBytes(StandardCharsets.UTF_8);
    byte[] chunk = new byte[64 * 1024];
    for (int i = 0; i + line.length <= chunk.length; i += line.length) {
      System.arraycopy(line, 0, chunk, i, line.length);
    }
    hostile.createContext("/", ex -> {
      ex.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4");
      ex.sendResponseHeaders(200, HUGE);
      try (OutputStream out = ex.getResponseBody()) {
        for (long sent = 0; sent < HUGE; sent += chunk.length) {
          out.write(chunk);
          written.addAndGet(chunk.length);
        }
      } catch (IOException e) {
        // the gateway cut the exchange, as it should
      }
    });
    hostile.start();
    return URI.create("http://127.0.0.1:" + hostile.getAddress().getPort());
  }

  @Test
  void aThreeHundredMegabyteExpositionFailsItsScrapesAndTheOtherReplicaStaysFresh()
      throws Exception {
    URI big = startHostile();
    fleet = FleetView.builder()
        .endpoint(ReplicaEndpoint.builder("hostile", big).build())
        .endpoint(ReplicaEndpoint.builder("healthy", healthy.uri()).build())
        .maxResponseBytes(1 << 20)
        .failuresToUnhealthy(2)
        .scrapeTimeout(Duration.ofSeconds(30)) // time is not the subject: the bound cuts first
        .build();
    for (int i = 0; i < 2; i++) {
      fleet.scrapeNow().toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
    assertThat(fleet.replica("hostile").orElseThrow().health())
        .isEqualTo(ReplicaHealth.UNHEALTHY);
    assertThat(fleet.replica("healthy").orElseThrow().health())
        .isEqualTo(ReplicaHealth.HEALTHY);
    // each exchange was cut soon after the bound, far short of the 300 MB the engine offered
    assertThat(written.get()).isLessThan(2 * (HUGE / 10));

    long before = healthy.count("/metrics");
    List<Replica> again = fleet.scrapeNow().toCompletableFuture().get(60, TimeUnit.SECONDS);
    assertThat(healthy.count("/metrics")).as("scraping goes on").isGreaterThan(before);
    assertThat(again).extracting(Replica::id).contains("healthy");
  }

  @Test
  void aDiscoveryThatThrowsAnErrorDoesNotStopThePolls() throws Exception {
    java.util.concurrent.atomic.AtomicInteger polls = new java.util.concurrent.atomic.AtomicInteger();
    ReplicaEndpoint endpoint = ReplicaEndpoint.builder("healthy", healthy.uri()).build();
    fleet = FleetView.builder()
        .discovery(() -> {
          if (polls.incrementAndGet() <= 2) {
            throw new AssertionError("a plugin's error"); // an Error, not an exception
          }
          return List.of(endpoint);
        })
        .discoveryInterval(Duration.ofMillis(10))
        .build()
        .start();
    EngineServer.await("the replica discovered after the failing polls",
        () -> fleet.replica("healthy").isPresent());
    assertThat(polls.get()).isGreaterThan(2);
  }

  @Test
  void theBoundIsCheckedAtTheBuilder() {
    assertThatThrownBy(() -> FleetView.builder().maxResponseBytes(0))
        .hasMessage("maxResponseBytes: 0 (expected: > 0)");
    assertThat(FleetView.Builder.DEFAULT_MAX_RESPONSE_BYTES).isEqualTo(16 << 20);
  }
}
