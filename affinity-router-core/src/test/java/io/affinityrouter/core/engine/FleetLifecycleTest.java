package io.affinityrouter.core.engine;

import static io.affinityrouter.core.engine.EngineServer.fixture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.core.engine.EngineServer.Answer;
import io.affinityrouter.spi.ReplicaEndpoint;
import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** close() stopping everything, and readers racing scrapes and failures. */
class FleetLifecycleTest {

  private static List<Thread> threadsNamed(String prefix) {
    List<Thread> out = new ArrayList<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().startsWith(prefix) && t.isAlive()) {
        out.add(t);
      }
    }
    return out;
  }

  @Test
  void closeStopsTheSchedulerAndCancelsScrapesInFlight() throws Exception {
    try (EngineServer slow = new EngineServer().answer("/metrics", Answer.held())) {
      FleetView fleet = FleetView.builder()
          .endpoint(ReplicaEndpoint.builder("a", slow.uri()).build())
          .scrapeInterval(Duration.ofMillis(10)).scrapeTimeout(Duration.ofMinutes(1)).build();
      fleet.start();
      EngineServer.await("a scrape in flight", () -> slow.count("/metrics") == 1);
      var waiting = fleet.scrapeNow().toCompletableFuture();
      assertThat(threadsNamed(fleet.threadPrefix())).isNotEmpty();
      fleet.close();
      fleet.close();
      assertThat(waiting.get(10, TimeUnit.SECONDS)).singleElement()
          .extracting(Replica::health).isEqualTo(ReplicaHealth.UNHEALTHY);
      EngineServer.await("the fleet's threads are gone",
          () -> threadsNamed(fleet.threadPrefix()).isEmpty());
      assertThat(slow.count("/metrics")).as("no scrape after close").isEqualTo(1);
      assertThatThrownBy(() -> fleet.firstSnapshot().toCompletableFuture().get(1, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class);
      assertThatThrownBy(fleet::start).isInstanceOf(IllegalStateException.class);
      assertThat(fleet.scrapeNow().toCompletableFuture().get(1, TimeUnit.SECONDS)).hasSize(1);
      fleet.reportFailure("a", new IOException("after close: ignored"));
    }
  }

  @Test
  void aScrapeNowQueuedBehindABusySchedulerCompletesOnClose() throws Exception {
    CountDownLatch polling = new CountDownLatch(1);
    CountDownLatch never = new CountDownLatch(1);
    io.affinityrouter.spi.ReplicaDiscovery stuck = () -> {
      polling.countDown();
      try {
        never.await(); // a registry that hangs, holding the scheduler thread
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return List.of();
    };
    FleetView fleet = FleetView.builder().discovery(stuck).build();
    var busy = fleet.scrapeNow().toCompletableFuture();
    polling.await(10, TimeUnit.SECONDS);
    var queued = fleet.scrapeNow().toCompletableFuture();
    fleet.close();
    assertThat(queued.get(10, TimeUnit.SECONDS)).isEmpty();
    assertThat(busy.get(10, TimeUnit.SECONDS)).isEmpty();
  }

  @Test
  void readersSeeWholeConsistentSnapshotsWhileScrapesAndFailuresRace() throws Exception {
    String body = fixture(EngineServer.VLLM_V1);
    List<EngineServer> servers = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      servers.add(new EngineServer().metrics(body));
    }
    servers.get(3).answer("/metrics", Answer.status(500));
    FleetView.Builder b = FleetView.builder().scrapeInterval(Duration.ofMillis(2))
        .scrapeTimeout(Duration.ofSeconds(10))
        .initialBackoff(Duration.ofMillis(1)).maxBackoff(Duration.ofMillis(5))
        .failuresToUnhealthy(1);
    List<String> ids = List.of("r0", "r1", "r2", "r3");
    for (int i = 0; i < 4; i++) {
      b.endpoint(ReplicaEndpoint.builder(ids.get(i), servers.get(i).uri()).build());
    }
    AtomicReference<Throwable> failure = new AtomicReference<>();
    AtomicLong reads = new AtomicLong();
    Set<List<Replica>> distinct = java.util.concurrent.ConcurrentHashMap.newKeySet();
    try (FleetView fleet = b.build().start()) {
      CountDownLatch stop = new CountDownLatch(1);
      List<Thread> threads = new ArrayList<>();
      for (int r = 0; r < 3; r++) {
        threads.add(new Thread(() -> {
          try {
            while (stop.getCount() > 0) {
              List<Replica> list = fleet.replicas();
              assertThat(list).extracting(Replica::id).containsExactlyElementsOf(ids);
              assertThat(list.get(3).health()).isEqualTo(ReplicaHealth.UNHEALTHY);
              if (list.size() != new HashSet<>(list).size()) {
                throw new AssertionError("duplicate replicas " + list);
              }
              distinct.add(list);
              reads.incrementAndGet();
            }
          } catch (Throwable t) {
            failure.compareAndSet(null, t);
          }
        }));
      }
      threads.add(new Thread(() -> {
        while (stop.getCount() > 0) {
          fleet.reportFailure("r" + (int) (Math.random() * 4), new ConnectException("x"));
          fleet.scrapeNow();
          java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
        }
      }));
      threads.forEach(Thread::start);
      EngineServer.await("many scrapes and reads", 60, () -> failure.get() != null
          || (servers.stream().mapToLong(x -> x.count("/metrics")).sum() > 100
              && reads.get() > 10_000));
      stop.countDown();
      for (Thread t : threads) {
        t.join(10_000);
      }
      assertThat(failure.get()).isNull();
      assertThat(distinct.size()).as("snapshots changed under the readers").isGreaterThan(2);
    } finally {
      servers.forEach(EngineServer::close);
    }
  }
}
