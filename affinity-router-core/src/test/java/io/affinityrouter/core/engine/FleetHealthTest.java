package io.affinityrouter.core.engine;

import static io.affinityrouter.core.engine.EngineServer.fixture;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.core.engine.EngineServer.Answer;
import io.affinityrouter.spi.ReplicaEndpoint;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Health from scrapes and passive failures, and recovery with backoff, on injected time. */
class FleetHealthTest {
  private static final long SECOND = 1_000_000_000L;
  private final AtomicLong time = new AtomicLong(1_000 * SECOND);
  private final EngineServer server = new EngineServer().metrics(fixture(EngineServer.VLLM_V1));
  private FleetView fleet;

  @AfterEach
  void tearDown() {
    if (fleet != null) {
      fleet.close();
    }
    server.close();
  }

  private FleetView.Builder builder(java.net.URI uri) {
    return FleetView.builder().endpoint(ReplicaEndpoint.builder("a", uri).build())
        .ticker(time::get).backoffJitter(0).initialBackoff(Duration.ofSeconds(1))
        .maxBackoff(Duration.ofSeconds(4)).scrapeTimeout(Duration.ofSeconds(5));
  }

  private ReplicaHealth scrape() throws Exception {
    List<Replica> list = fleet.scrapeNow().toCompletableFuture().get(20, TimeUnit.SECONDS);
    return list.get(0).health();
  }

  @Test
  void aRefusedConnectionIsUnhealthyAtOnce() throws Exception {
    fleet = builder(EngineServer.refusingUri()).failuresToUnhealthy(5).build();
    assertThat(scrape()).isEqualTo(ReplicaHealth.UNHEALTHY);
    assertThat(fleet.ready()).isFalse();
  }

  @Test
  void timeoutsCountAfterSeveralInARow() throws Exception {
    fleet = builder(server.uri()).failuresToUnhealthy(2)
        .scrapeTimeout(Duration.ofMillis(300)).build();
    // a busy machine may time the first scrapes out too: any success resets the count
    EngineServer.await("a scrape within the timeout", 60, () -> {
      try {
        return scrape() == ReplicaHealth.HEALTHY;
      } catch (Exception e) {
        throw new AssertionError(e);
      }
    });
    long before = server.count("/metrics");
    server.answer("/metrics", Answer.held());
    assertThat(scrape()).as("one slow answer is not a dead engine").isEqualTo(ReplicaHealth.HEALTHY);
    assertThat(scrape()).isEqualTo(ReplicaHealth.UNHEALTHY);
    assertThat(server.count("/metrics")).isEqualTo(before + 2);
  }

  @Test
  void serverErrorsAndGarbageBodiesCountAsFailures() throws Exception {
    fleet = builder(server.uri()).failuresToUnhealthy(3).build();
    assertThat(scrape()).isEqualTo(ReplicaHealth.HEALTHY);
    server.answer("/metrics", Answer.status(500));
    assertThat(scrape()).isEqualTo(ReplicaHealth.HEALTHY);
    server.answer("/metrics", Answer.ok("<html>not metrics</html>\n{{{"));
    assertThat(scrape()).isEqualTo(ReplicaHealth.HEALTHY);
    server.metrics(fixture(EngineServer.VLLM_V1));
    assertThat(scrape()).as("a success restarts the count").isEqualTo(ReplicaHealth.HEALTHY);
    server.answer("/metrics", Answer.status(503));
    scrape();
    scrape();
    assertThat(scrape()).isEqualTo(ReplicaHealth.UNHEALTHY);
  }

  @Test
  void recoveryWaitsForABackoffThatDoublesUpToItsCap() throws Exception {
    fleet = builder(server.uri()).failuresToUnhealthy(1).build();
    assertThat(scrape()).isEqualTo(ReplicaHealth.HEALTHY);
    server.answer("/metrics", Answer.status(500));
    assertThat(scrape()).isEqualTo(ReplicaHealth.UNHEALTHY);
    long probes = server.count("/metrics");
    // backoffs 1 s, 2 s, 4 s, 4 s (capped): each failed probe waits longer
    for (long backoff : new long[] {1, 2, 4, 4}) {
      time.addAndGet(backoff * SECOND - 1);
      assertThat(scrape()).isEqualTo(ReplicaHealth.UNHEALTHY);
      assertThat(server.count("/metrics")).as("not probed inside the backoff").isEqualTo(probes);
      time.addAndGet(1);
      assertThat(scrape()).isEqualTo(ReplicaHealth.UNHEALTHY);
      assertThat(server.count("/metrics")).as("probed after %d s", backoff).isEqualTo(++probes);
    }
    server.metrics(fixture(EngineServer.VLLM_V1));
    time.addAndGet(4 * SECOND);
    assertThat(scrape()).isEqualTo(ReplicaHealth.HEALTHY);
    server.answer("/metrics", Answer.status(500));
    assertThat(scrape()).isEqualTo(ReplicaHealth.UNHEALTHY);
    time.addAndGet(SECOND);
    server.metrics(fixture(EngineServer.VLLM_V1));
    assertThat(scrape()).as("the backoff starts over after a recovery").isEqualTo(ReplicaHealth.HEALTHY);
  }

  @Test
  void aReportedFailureIsUnhealthyAtOnceAndABurstCountsOnce() throws Exception {
    fleet = builder(server.uri()).build();
    assertThat(scrape()).isEqualTo(ReplicaHealth.HEALTHY);
    List<Replica> healthy = fleet.replicas();
    for (int i = 0; i < 10; i++) {
      fleet.reportFailure("a", new ConnectException("refused"));
    }
    assertThat(fleet.replicas()).isNotSameAs(healthy);
    assertThat(fleet.replicas().get(0).health()).isEqualTo(ReplicaHealth.UNHEALTHY);
    fleet.reportFailure("unknown", new ConnectException("ignored"));
    long probes = server.count("/metrics");
    time.addAndGet(SECOND - 1);
    assertThat(scrape()).isEqualTo(ReplicaHealth.UNHEALTHY);
    assertThat(server.count("/metrics")).isEqualTo(probes);
    time.addAndGet(1);
    assertThat(scrape()).as("one backoff, not ten").isEqualTo(ReplicaHealth.HEALTHY);
  }

  @Test
  void aScrapeStartedBeforeAReportedFailureDoesNotHealIt() throws Exception {
    fleet = builder(server.uri()).build();
    assertThat(scrape()).isEqualTo(ReplicaHealth.HEALTHY);
    server.answer("/metrics", Answer.held());
    var inFlight = fleet.scrapeNow().toCompletableFuture();
    EngineServer.await("the scrape reached the server", () -> server.count("/metrics") == 2);
    fleet.reportFailure("a", new java.io.IOException("reset"));
    server.answer("/metrics", Answer.ok(fixture(EngineServer.VLLM_V1)));
    server.release();
    inFlight.get(20, TimeUnit.SECONDS);
    assertThat(fleet.replicas().get(0).health()).isEqualTo(ReplicaHealth.UNHEALTHY);
  }
}
