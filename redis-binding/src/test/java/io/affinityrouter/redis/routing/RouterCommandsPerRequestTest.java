package io.affinityrouter.redis.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.redis.RedisBindingStore;
import io.affinityrouter.redis.RedisBindingStoreBuilder;
import io.affinityrouter.redis.RedisBindingStoreStats;
import io.affinityrouter.redis.testing.CommandStats;
import io.affinityrouter.redis.testing.Fleet;
import io.affinityrouter.redis.testing.RedisServerExtension;
import io.affinityrouter.redis.testing.Windowed;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Redis commands per routed request over a steady run of two routers (gateways) sharing Redis,
 * read from {@code INFO commandstats} (commands clients sent; the commands scripts run inside are
 * not round trips and are left out). Goals: at most 1.0 without the local cache, at most 0.2 with it
 * (default refresh interval, hot sessions: many turns per session per interval).
 *
 * <p>Measure: {@code mvn -B -ntp -pl redis-binding -am verify -Dtest=RouterCommandsPerRequestTest
 * -Dsurefire.failIfNoSpecifiedTests=false}, then read {@code commands per routed request} in
 * {@code redis-binding/target/surefire-reports/*RouterCommandsPerRequestTest-output.txt}.
 */
class RouterCommandsPerRequestTest {

  private static final int SESSIONS = 1_000;
  /** Length of the steady run: more than twice the cache refresh interval. */
  private static final long RUN_MILLIS = 5_000;
  /** Each session takes a turn at most this often per router (a hot, agentic session). */
  private static final long ROUND_MILLIS = 150;
  @RegisterExtension
  static final RedisServerExtension redis = new RedisServerExtension();

  @ParameterizedTest(name = "local cache size {0}")
  @ValueSource(longs = {0, 10_000})
  void steadyRun(long cacheSize) throws Exception {
    redis.server().cli("flushall");
    List<Replica> replicas = Fleet.replicas(8);
    List<RedisBindingStore> stores = new ArrayList<>();
    List<Router> routers = new ArrayList<>();
    for (int g = 0; g < 2; g++) {
      RedisBindingStore store = RedisBindingStore.builder().uri(redis.uri())
          .commandTimeout(Duration.ofSeconds(1)).localCacheSize(cacheSize).build();
      stores.add(store);
      // Binding commands only: the load exchange's own (one every 100 ms per router) is not per request.
      routers.add(AffinityRouter.builder().bindingStore(store).storeTimeout(Duration.ofSeconds(1))
          .noLoadExchange().build());
    }
    AtomicInteger degraded = new AtomicInteger();
    // First turns (claims) through both routers, then the steady run.
    for (Router router : routers) {
      Windowed.run(SESSIONS, 64, i -> router.selectAsync(Fleet.turn(i, 0), replicas)
          .thenApply(d -> done(d, degraded)));
    }
    CommandStats.reset(redis.server());
    long start = System.nanoTime();
    long requests = 0;
    int rounds = 0;
    while (System.nanoTime() - start < TimeUnit.MILLISECONDS.toNanos(RUN_MILLIS)) {
      long roundStart = System.nanoTime();
      int turn = 1 + rounds++ % 12;
      for (Router router : routers) {
        Windowed.run(SESSIONS, 64, i -> router.selectAsync(Fleet.turn(i, turn), replicas)
            .thenApply(d -> done(d, degraded)));
        requests += SESSIONS;
      }
      long left = ROUND_MILLIS - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - roundStart);
      if (left > 0) {
        Thread.sleep(left);
      }
    }
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    Map<String, Long> calls = CommandStats.read(redis.server());
    long commands = CommandStats.clientCommands(calls);
    double perRequest = commands / (double) requests;
    RedisBindingStoreStats stats = stores.get(0).stats();
    System.out.printf("commands per routed request, local cache %d (refresh %d ms): %d requests"
        + " (%d sessions x %d rounds x 2 routers) in %d ms, %d client commands %s -> %.3f per"
        + " request; router 1 cache hits %d, misses %d, refreshes %d%n", cacheSize,
        RedisBindingStoreBuilder.DEFAULT_LOCAL_CACHE_REFRESH_MS, requests, SESSIONS, rounds, millis,
        commands, calls, perRequest, stats.cacheHits(), stats.cacheMisses(), stats.cacheRefreshes());
    routers.forEach(Router::close);
    assertThat(degraded).hasValue(0);
    if (cacheSize == 0) {
      assertThat(perRequest).isLessThanOrEqualTo(1.0).isGreaterThan(0.9);
    } else {
      assertThat(perRequest).isLessThanOrEqualTo(0.2);
    }
  }

  private static RoutingDecision done(RoutingDecision d, AtomicInteger degraded) {
    assertThat(d.isRouted()).isTrue();
    if (d.isDegraded()) {
      degraded.incrementAndGet();
    }
    d.lease().close();
    return d;
  }
}
