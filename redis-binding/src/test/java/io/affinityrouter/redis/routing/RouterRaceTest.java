package io.affinityrouter.redis.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.redis.RedisBindingStore;
import io.affinityrouter.redis.testing.Fleet;
import io.affinityrouter.redis.testing.RedisServerExtension;
import io.affinityrouter.redis.testing.Windowed;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Four routers, each with its own Redis store and Lettuce client, route the concurrent first turns
 * of 10,000 sessions and then 10 more turns each: no session is ever routed to two replicas.
 */
class RouterRaceTest {

  private static final int SESSIONS = 10_000;
  private static final int ROUTERS = 4;
  private static final int MORE_TURNS = 10;
  @RegisterExtension
  static final RedisServerExtension redis = new RedisServerExtension();

  @Test
  void racingRoutersPinEverySessionToOneReplica() throws Exception {
    List<Replica> replicas = Fleet.replicas(8);
    List<Router> routers = new ArrayList<>();
    for (int g = 0; g < ROUTERS; g++) {
      RedisBindingStore store = RedisBindingStore.builder()
          .uri(redis.uri()).commandTimeout(Duration.ofSeconds(2)).build();
      // A generous store timeout: this test is about the race, not about outages.
      routers.add(AffinityRouter.builder().bindingStore(store).storeTimeout(Duration.ofSeconds(2))
          .build());
    }
    ExecutorService pool = Executors.newFixedThreadPool(ROUTERS);
    List<List<AtomicReferenceArray<String>>> routed = new ArrayList<>();
    int[] degraded = new int[1];
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<List<AtomicReferenceArray<String>>>> runs = new ArrayList<>();
      for (Router router : routers) {
        runs.add(pool.submit(() -> {
          go.await();
          List<AtomicReferenceArray<String>> turns = new ArrayList<>();
          for (int t = 0; t <= MORE_TURNS; t++) {
            int turn = t;
            turns.add(Windowed.run(SESSIONS, 128, i -> router.selectAsync(Fleet.turn(i, turn), replicas)
                .thenApply(d -> outcome(d, degraded))));
          }
          return turns;
        }));
      }
      go.countDown();
      for (Future<List<AtomicReferenceArray<String>>> run : runs) {
        routed.add(run.get(300, TimeUnit.SECONDS));
      }
    } finally {
      pool.shutdownNow();
    }

    int split = 0;
    Set<String> used = new HashSet<>();
    RedisBindingStore reader = RedisBindingStore.builder()
        .uri(redis.uri()).build();
    for (int i = 0; i < SESSIONS; i++) {
      Set<String> where = new HashSet<>();
      for (List<AtomicReferenceArray<String>> router : routed) {
        for (AtomicReferenceArray<String> turn : router) {
          where.add(turn.get(i));
        }
      }
      split += where.size() > 1 ? 1 : 0;
      used.addAll(where);
      if (i % 500 == 0) {
        Binding stored = reader.get(new BindingKey("m", "t", "session-" + i)).toCompletableFuture()
            .get(5, TimeUnit.SECONDS).orElseThrow();
        assertThat(where).containsExactly(stored.replicaId());
      }
    }
    reader.close();
    routers.forEach(Router::close);
    System.out.printf("router race: %d routers x %d sessions x %d turns: %d sessions on more than one"
        + " replica, %d degraded decisions, %d replicas used%n", ROUTERS, SESSIONS, MORE_TURNS + 1,
        split, degraded[0], used.size());
    assertThat(split).isZero();
    assertThat(degraded[0]).isZero();
    assertThat(used).hasSizeGreaterThan(1).doesNotContainNull();
  }

  private static String outcome(RoutingDecision d, int[] degraded) {
    if (!d.isRouted()) {
      return "not routed: " + d.reason();
    }
    if (d.isDegraded()) {
      synchronized (degraded) {
        degraded[0]++;
      }
    }
    d.lease().close();
    return d.replica().id();
  }
}
