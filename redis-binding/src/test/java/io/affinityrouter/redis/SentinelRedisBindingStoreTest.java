package io.affinityrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.redis.testing.RedisProcess;
import io.affinityrouter.redis.testing.Windowed;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The store through {@code redis-sentinel://} on a real master + replica + sentinel, with a
 * failover ({@code SENTINEL FAILOVER}) during traffic: the store follows the new master without a
 * restart and no binding is lost.
 */
class SentinelRedisBindingStoreTest {

  private static final int SESSIONS = 1_000;
  private static final Duration TTL = Duration.ofMinutes(10);
  private static RedisProcess master;
  private static RedisProcess replica;
  private static RedisProcess sentinel;

  @BeforeAll
  static void start() {
    master = RedisProcess.start("--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0");
    replica = RedisProcess.start("--replicaof", "127.0.0.1", Integer.toString(master.port()),
        "--repl-diskless-load", "disabled");
    await("replica in sync", () -> replica.cli("info", "replication").contains("master_link_status:up"));
    sentinel = RedisProcess.sentinel("sentinel monitor mymaster 127.0.0.1 " + master.port() + " 1\n"
        + "sentinel down-after-milliseconds mymaster 1000\n"
        + "sentinel failover-timeout mymaster 10000\n");
    await("sentinel sees the replica", () -> sentinel.cli("sentinel", "replicas", "mymaster")
        .contains(Integer.toString(replica.port())));
  }

  @AfterAll
  static void stop() {
    for (RedisProcess p : new RedisProcess[] {sentinel, replica, master}) {
      if (p != null) {
        p.close();
      }
    }
  }

  private static void await(String what, java.util.function.BooleanSupplier condition) {
    long deadline = System.currentTimeMillis() + 60_000;
    while (!condition.getAsBoolean()) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("timed out waiting: " + what);
      }
      RedisProcess.sleep(50);
    }
  }

  private static BindingKey key(int i) {
    return new BindingKey("m", "t", "sentinel-" + i);
  }

  @Test
  void followsAFailoverDuringTrafficWithoutLosingBindings() throws Exception {
    String uri = "redis-sentinel://127.0.0.1:" + sentinel.port() + "#mymaster";
    try (RedisBindingStore store = RedisBindingStore.builder().uri(uri)
        .commandTimeout(Duration.ofSeconds(1)).reconnectMaxDelay(Duration.ofMillis(200)).build()) {
      AtomicReferenceArray<Binding> claimed =
          Windowed.run(SESSIONS, 64, i -> store.getOrClaim(key(i), "r" + i % 4, TTL));
      await("replica caught up", () -> replica.cli("dbsize").equals(Integer.toString(SESSIONS)));

      AtomicBoolean running = new AtomicBoolean(true);
      AtomicInteger ok = new AtomicInteger();
      AtomicInteger failed = new AtomicInteger();
      AtomicInteger wrong = new AtomicInteger();
      AtomicLong lastFailure = new AtomicLong();
      Thread traffic = new Thread(() -> {
        int i = 0;
        while (running.get()) {
          int s = i++ % SESSIONS;
          try {
            Binding b = store.getOrClaim(key(s), "other", TTL).toCompletableFuture()
                .get(5, TimeUnit.SECONDS);
            ok.incrementAndGet();
            if (!b.replicaId().equals(claimed.get(s).replicaId())) {
              wrong.incrementAndGet();
            }
          } catch (Exception e) {
            failed.incrementAndGet();
            lastFailure.set(System.nanoTime());
          }
          RedisProcess.sleep(1);
        }
      });
      traffic.start();
      RedisProcess.sleep(500);
      long failoverStart = System.nanoTime();
      assertThat(sentinel.cli("sentinel", "failover", "mymaster")).isEqualTo("OK");
      await("the replica is promoted", () -> sentinel.cli("sentinel", "get-master-addr-by-name",
          "mymaster").contains(Integer.toString(replica.port())));
      long promotedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failoverStart);
      // The store follows +switch-master: new claims land on the promoted replica.
      AtomicInteger probe = new AtomicInteger();
      await("claims reach the new master", () -> {
        store.getOrClaim(key(SESSIONS + probe.incrementAndGet()), "r9", TTL)
            .toCompletableFuture().handle((b, e) -> b).join();
        return Long.parseLong(replica.cli("dbsize")) > SESSIONS;
      });
      long switchedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - failoverStart);
      int okBefore = ok.get();
      RedisProcess.sleep(1_000);
      running.set(false);
      traffic.join();
      long recoveredMs = lastFailure.get() == 0 ? 0
          : TimeUnit.NANOSECONDS.toMillis(lastFailure.get() - failoverStart);
      System.out.printf("sentinel failover during traffic: %d ok, %d failed (last failure %d ms after"
          + " SENTINEL FAILOVER), sentinel reported the new master after %d ms, claims reached it"
          + " after %d ms, %d answered a different replica%n", ok.get(), failed.get(), recoveredMs,
          promotedMs, switchedMs, wrong.get());
      assertThat(wrong).hasValue(0);
      assertThat(ok.get()).isGreaterThan(okBefore);

      // Writes now land on the promoted replica, and every binding survived.
      // The store hears +switch-master itself and reopens at once (150-250 ms beside two CPU
      // burners); Lettuce's own refresh runs at most once per 5 s and drops the sentinel events
      // inside that window, which once left the store on the old master for 35 s.
      assertThat(switchedMs - promotedMs).isLessThan(10_000);
      long keysBefore = Long.parseLong(replica.cli("dbsize"));
      Binding fresh = store.getOrClaim(key(-1), "r9", TTL).toCompletableFuture()
          .get(5, TimeUnit.SECONDS);
      assertThat(fresh.written()).isTrue();
      assertThat(Long.parseLong(replica.cli("dbsize"))).isEqualTo(keysBefore + 1);
      AtomicReferenceArray<Binding> after =
          Windowed.run(SESSIONS, 64, i -> store.getOrClaim(key(i), "late", TTL));
      for (int i = 0; i < SESSIONS; i++) {
        assertThat(after.get(i).replicaId()).isEqualTo(claimed.get(i).replicaId());
      }
    }
  }
}
