package io.affinityrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.redis.testing.RedisServerExtension;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Several stores repin the same keys concurrently, often from deliberately stale views. Every write
 * must extend the chain of the key's writes (its expected generation is the generation of the
 * write before it), stale repins must return a newer binding, and the final binding is the newest
 * write: a stale repin never overwrites a newer binding.
 */
class RepinFencingTest {

  private static final Duration TTL = Duration.ofMinutes(5);
  private static final int KEYS = 50;
  private static final int OPS_PER_ROUTER = 1_500;
  @RegisterExtension
  static final RedisServerExtension redis = new RedisServerExtension();

  record Write(int key, long expected, long generation, String replica) {}

  @Test
  void interleavedStaleAndFreshRepinsNeverLoseTheNewerBinding() throws Exception {
    int routers = 4;
    List<RedisBindingStore> stores = new ArrayList<>();
    for (int r = 0; r < routers; r++) {
      // Half of the routers run with the local cache: their views come from it.
      stores.add(RedisBindingStore.builder().uri(redis.uri())
          .commandTimeout(Duration.ofSeconds(2)).localCacheSize(r % 2 == 0 ? 0 : 1_000).build());
    }
    Queue<Write> writes = new ConcurrentLinkedQueue<>();
    ExecutorService pool = Executors.newFixedThreadPool(routers);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Integer>> results = new ArrayList<>();
    for (int r = 0; r < routers; r++) {
      int router = r;
      RedisBindingStore store = stores.get(r);
      results.add(pool.submit(() -> {
        Random random = new Random(42 + router);
        Map<Integer, List<Binding>> seen = new HashMap<>();
        int stale = 0;
        go.await();
        for (int op = 0; op < OPS_PER_ROUTER; op++) {
          int k = random.nextInt(KEYS);
          BindingKey key = new BindingKey("m", "t", "fence-" + k);
          List<Binding> history = seen.computeIfAbsent(k, x -> new ArrayList<>());
          Binding view;
          if (history.isEmpty() || random.nextInt(3) == 0) {
            view = store.getOrClaim(key, "r" + router, TTL).toCompletableFuture().get(5, TimeUnit.SECONDS);
            if (view.written()) {
              writes.add(new Write(k, 0, view.generation(), view.replicaId()));
            }
            history.add(view);
          } else {
            view = history.get(random.nextInt(history.size()));
          }
          String target = "r" + router + "-" + op;
          Binding result = store.repin(key, view.generation(), target, TTL)
              .toCompletableFuture().get(5, TimeUnit.SECONDS);
          if (result.written()) {
            assertThat(result.replicaId()).isEqualTo(target);
            assertThat(result.generation()).isGreaterThan(view.generation());
            writes.add(new Write(k, view.generation(), result.generation(), target));
          } else {
            stale++;
            assertThat(result.generation()).isGreaterThan(view.generation());
          }
          history.add(result);
        }
        return stale;
      }));
    }
    go.countDown();
    int staleTotal = 0;
    for (Future<Integer> f : results) {
      staleTotal += f.get(120, TimeUnit.SECONDS);
    }
    pool.shutdownNow();

    Map<Integer, List<Write>> byKey = new HashMap<>();
    for (Write w : writes) {
      byKey.computeIfAbsent(w.key(), x -> new ArrayList<>()).add(w);
    }
    for (Map.Entry<Integer, List<Write>> e : byKey.entrySet()) {
      List<Write> chain = e.getValue();
      chain.sort(Comparator.comparingLong(Write::generation));
      Set<Long> generations = new HashSet<>();
      for (int i = 0; i < chain.size(); i++) {
        Write w = chain.get(i);
        assertThat(generations.add(w.generation())).as("unique generation").isTrue();
        long expectedBefore = i == 0 ? 0 : chain.get(i - 1).generation();
        assertThat(w.expected()).as("key %d write %d extends the chain", e.getKey(), i)
            .isEqualTo(expectedBefore);
      }
      Write newest = chain.get(chain.size() - 1);
      Binding stored = stores.get(0).get(new BindingKey("m", "t", "fence-" + e.getKey()))
          .toCompletableFuture().get(5, TimeUnit.SECONDS).orElseThrow();
      assertThat(stored.generation()).isEqualTo(newest.generation());
      assertThat(stored.replicaId()).isEqualTo(newest.replica());
    }
    System.out.printf("fencing: %d routers x %d repins on %d keys: %d applied, %d refused as stale,"
        + " 0 lost%n", routers, OPS_PER_ROUTER, KEYS, writes.size() - byKey.size(), staleTotal);
    assertThat(byKey).hasSize(KEYS);
    assertThat(staleTotal).isGreaterThan(OPS_PER_ROUTER / 4);
    stores.forEach(RedisBindingStore::close);
  }
}
