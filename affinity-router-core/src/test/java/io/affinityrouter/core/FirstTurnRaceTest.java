package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.spi.BindingKey;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Eight gateways race the first turn of 10,000 sessions: every session ends on one replica. */
class FirstTurnRaceTest {
  private static final int SESSIONS = 10_000;
  private static final int THREADS = 8;

  @Test
  void racingFirstTurnsAgreeOnOneReplicaPerSession() throws Exception {
    InMemoryBindingStore store = InMemoryBindingStore.builder().build();
    List<Replica> fleet = Prompts.replicas(16);
    ConcurrentHashMap<String, String> firstSeen = new ConcurrentHashMap<>();
    List<String> conflicts = Collections.synchronizedList(new ArrayList<>());
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<Integer>> results = new ArrayList<>();
    for (int t = 0; t < THREADS; t++) {
      int thread = t;
      // Each thread is its own gateway: its own router (own load view and prefix index).
      Router router = AffinityRouter.builder().bindingStore(store).prefixIndexEntries(1 << 16)
          .build();
      results.add(pool.submit(() -> {
        List<Integer> order = new ArrayList<>();
        for (int s = 0; s < SESSIONS; s++) {
          order.add(s);
        }
        Collections.shuffle(order, new Random(thread));
        start.await();
        int routed = 0;
        for (int s : order) {
          RoutingDecision d = router.select(RoutingRequest.builder().sessionId("session-" + s)
              .promptTokens(new int[] {s, s + 1, s + 2, thread}).build(), fleet);
          String prior = firstSeen.putIfAbsent("session-" + s, d.replica().id());
          if (prior != null && !prior.equals(d.replica().id())) {
            conflicts.add("session-" + s + ": " + prior + " vs " + d.replica().id());
          }
          d.lease().close();
          routed++;
        }
        return routed;
      }));
    }
    start.countDown();
    int total = 0;
    for (Future<Integer> f : results) {
      total += f.get(120, TimeUnit.SECONDS);
    }
    pool.shutdown();
    assertThat(total).isEqualTo(SESSIONS * THREADS);
    assertThat(conflicts).isEmpty();
    for (int s = 0; s < SESSIONS; s++) {
      assertThat(store.get(new BindingKey("", "", "session-" + s)).toCompletableFuture().join()
          .orElseThrow().replicaId()).isEqualTo(firstSeen.get("session-" + s));
    }
  }
}
