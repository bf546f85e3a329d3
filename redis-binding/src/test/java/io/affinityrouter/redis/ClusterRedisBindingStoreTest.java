package io.affinityrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.redis.testing.RedisClusterProcesses;
import io.affinityrouter.redis.testing.RedisProcess;
import io.affinityrouter.redis.testing.Windowed;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The store on a real 3-master Redis Cluster, through a slot move made during traffic. */
class ClusterRedisBindingStoreTest {

  private static final int SESSIONS = 3_000;
  private static final Duration TTL = Duration.ofMinutes(10);
  private static RedisClusterProcesses cluster;

  @BeforeAll
  static void start() {
    cluster = new RedisClusterProcesses(3);
  }

  @AfterAll
  static void stop() {
    cluster.close();
  }

  private static RedisBindingStore store(long cacheSize) {
    return RedisBindingStore.builder().clusterUris(List.of(cluster.seed()))
        .commandTimeout(Duration.ofSeconds(10)).localCacheSize(cacheSize)
        .localCacheRefresh(Duration.ofMillis(500)).build();
  }

  private static BindingKey key(int i) {
    return new BindingKey("m", "t", "cluster-" + i);
  }

  @Test
  void aFreshStoreServesItsFirstCommandsOnEveryMaster() {
    // Without connecting to the masters first, a command that found its node's connection still
    // opening was rejected ("Currently not connected"): about one store in seven failed a call.
    for (int round = 0; round < 20; round++) {
      try (RedisBindingStore s = store(0)) {
        List<CompletableFuture<Binding>> claims = new ArrayList<>();
        for (int i = 0; i < 30; i++) { // 30 keys: every master's slots
          claims.add(s.getOrClaim(key(100_000 + 30 * round + i), "r1", TTL).toCompletableFuture());
        }
        for (CompletableFuture<Binding> c : claims) {
          assertThat(c.join().replicaId()).isEqualTo("r1");
        }
        assertThat(s.stats().failures()).as("round %d", round).isZero();
      }
    }
  }

  @Test
  void theLoadExchangeWorksOnACluster() {
    try (RedisBindingStore a = store(0); RedisBindingStore b = store(0)) {
      RedisLoadExchange ea = a.loadExchange();
      RedisLoadExchange eb = b.loadExchange();
      long now = System.currentTimeMillis();
      ea.exchange("gateway-a", java.util.Map.of("r1", 3.0), now);
      java.util.Map<String, Double> view = java.util.Map.of();
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (view.isEmpty() && System.nanoTime() < deadline) {
        view = eb.exchange("gateway-b", java.util.Map.of(), now);
        RedisProcess.sleep(20);
      }
      assertThat(view).containsEntry("r1", 3.0);
      assertThat(ea.failures() + eb.failures()).isZero();
    }
  }

  @Test
  void bindingsSpreadOverTheSlotsAndSurviveASlotMoveDuringTraffic() throws Exception {
    try (RedisBindingStore a = store(0); RedisBindingStore b = store(10_000)) {
      AtomicReferenceArray<Binding> claimed =
          Windowed.run(SESSIONS, 128, i -> a.getOrClaim(key(i), "r" + i % 5, TTL));
      for (RedisProcess node : cluster.nodes()) {
        assertThat(Long.parseLong(node.cli("dbsize"))).as("keys on node %d", node.port())
            .isGreaterThan(SESSIONS / 5);
      }
      // Traffic (no local cache: every call goes to Redis) while 2,000 slots move from node 0 to 1.
      AtomicBoolean running = new AtomicBoolean(true);
      AtomicInteger calls = new AtomicInteger();
      AtomicInteger failures = new AtomicInteger();
      AtomicInteger wrong = new AtomicInteger();
      Thread traffic = new Thread(() -> {
        int i = 0;
        while (running.get()) {
          int s = i++ % SESSIONS;
          try {
            Binding got = a.getOrClaim(key(s), "other", TTL).toCompletableFuture()
                .get(5, TimeUnit.SECONDS);
            if (!got.replicaId().equals(claimed.get(s).replicaId())) {
              wrong.incrementAndGet();
            }
          } catch (Exception e) {
            failures.incrementAndGet();
          }
          calls.incrementAndGet();
        }
      });
      traffic.start();
      String out = cluster.reshard(cluster.nodes().get(0), cluster.nodes().get(1), 2_000);
      RedisProcess.sleep(500);
      running.set(false);
      traffic.join();
      cluster.awaitOk();
      System.out.printf("cluster: slot move of 2000 slots during traffic: %d calls, %d failed,"
          + " %d answered a different replica%n", calls.get(), failures.get(), wrong.get());
      assertThat(out).doesNotContain("ERR");
      assertThat(wrong).hasValue(0);

      // Every binding survived the move, and is still served (and refreshed) by both stores.
      for (RedisBindingStore s : List.of(a, b)) {
        AtomicReferenceArray<Binding> after =
            Windowed.run(SESSIONS, 128, i -> s.getOrClaim(key(i), "late", TTL));
        for (int i = 0; i < SESSIONS; i++) {
          assertThat(after.get(i).replicaId()).isEqualTo(claimed.get(i).replicaId());
          assertThat(after.get(i).generation()).isEqualTo(claimed.get(i).generation());
        }
      }

      // A repin through one store reaches the other's cache (PUBLISH is cluster-wide).
      Binding moved = a.repin(key(7), claimed.get(7).generation(), "moved", TTL)
          .toCompletableFuture().get(5, TimeUnit.SECONDS);
      assertThat(moved.written()).isTrue();
      long deadline = System.currentTimeMillis() + 1_000;
      Binding seen;
      do {
        seen = b.getOrClaim(key(7), "x", TTL).toCompletableFuture().get(5, TimeUnit.SECONDS);
      } while (!seen.replicaId().equals("moved") && System.currentTimeMillis() < deadline);
      assertThat(seen.replicaId()).isEqualTo("moved");
      assertThat(b.stats().invalidationsReceived()).isPositive();
    }
  }
}
