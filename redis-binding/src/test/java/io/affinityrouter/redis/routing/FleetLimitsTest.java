package io.affinityrouter.redis.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.redis.RedisBindingStore;
import io.affinityrouter.redis.testing.CommandStats;
import io.affinityrouter.redis.testing.Fleet;
import io.affinityrouter.redis.testing.LatencyProxy;
import io.affinityrouter.redis.testing.RedisServerExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Fleet-wide per-replica limits through Redis: 4 routers (3 threads each, own stores and clients),
 * a limit of 3 in flight per replica, 3 replicas, each request holding its lease a moment. With
 * the fleet-wide limits, never more than 3 requests are in flight on a replica across all routers;
 * without them each router enforces its own 3, and the fleet goes past it.
 */
class FleetLimitsTest {
  private static final int ROUTERS = 4;
  private static final int THREADS_PER_ROUTER = 3;
  private static final int REQUESTS_PER_THREAD = 400;
  private static final int LIMIT = 3;

  @RegisterExtension
  static final RedisServerExtension redis = new RedisServerExtension();

  /** What one run saw. */
  private record Run(int maxInFlight, int routed, int atLimit, double commandsPerRouted,
      int unexpected, long heldAfter) {}

  @Test
  void neverMoreThanTheLimitInFlightFleetWide() throws Exception {
    Run on = run(true);
    Run off = run(false);
    System.out.printf("fleet-wide limit %d per replica, %d routers x %d threads: with the fleet"
        + " limits at most %d in flight on a replica (%d routed, %d ALL_AT_LIMIT, %.2f commands"
        + " per routed request); per router only: at most %d (%d routed, %d ALL_AT_LIMIT, %.2f"
        + " commands per routed request)%n", LIMIT, ROUTERS, THREADS_PER_ROUTER, on.maxInFlight(),
        on.routed(), on.atLimit(), on.commandsPerRouted(), off.maxInFlight(), off.routed(),
        off.atLimit(), off.commandsPerRouted());
    assertThat(on.maxInFlight()).isLessThanOrEqualTo(LIMIT);
    assertThat(on.atLimit()).as("requests shed at the fleet-wide limit").isPositive();
    assertThat(on.routed()).isPositive();
    assertThat(off.maxInFlight()).as("per-router limits alone").isGreaterThan(LIMIT);
    assertThat(on.unexpected() + off.unexpected()).as("decisions neither routed nor at limit")
        .isZero();
    assertThat(on.heldAfter()).as("slots still held once every lease closed").isZero();
  }

  private Run run(boolean fleetWide) throws Exception {
    redis.server().cli("flushall");
    CommandStats.reset(redis.server());
    List<Replica> fleet = Fleet.replicas(3);
    List<RedisBindingStore> stores = new ArrayList<>();
    List<Router> routers = new ArrayList<>();
    Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
    AtomicInteger max = new AtomicInteger();
    AtomicInteger routed = new AtomicInteger();
    AtomicInteger atLimit = new AtomicInteger();
    AtomicInteger unexpected = new AtomicInteger();
    try {
      for (int g = 0; g < ROUTERS; g++) {
        // Time is not the subject: generous command and store timeouts, so no limits call
        // fails over to the local limits on a busy machine.
        RedisBindingStore store = RedisBindingStore.builder().uri(redis.uri())
            .commandTimeout(Duration.ofSeconds(10)).build();
        stores.add(store);
        AffinityRouter.Builder b = AffinityRouter.builder().bindingStore(store)
            .maxInFlightRequests(LIMIT).storeTimeout(Duration.ofSeconds(10));
        if (fleetWide) {
          b.fleetLimits(store.fleetLimits(), Duration.ofMinutes(1));
        }
        routers.add(b.build());
      }
      List<Thread> threads = new ArrayList<>();
      for (int t = 0; t < ROUTERS * THREADS_PER_ROUTER; t++) {
        Router router = routers.get(t % ROUTERS);
        SplittableRandom random = new SplittableRandom(t);
        threads.add(new Thread(() -> {
          for (int i = 0; i < REQUESTS_PER_THREAD; i++) {
            RoutingDecision d = router.select(Fleet.turn(random.nextInt(200), 0), fleet);
            if (!d.isRouted()) {
              (d.reason() == RoutingReason.ALL_AT_LIMIT ? atLimit : unexpected).incrementAndGet();
              LockSupport.parkNanos(200_000);
              continue;
            }
            routed.incrementAndGet();
            AtomicInteger n = inFlight.computeIfAbsent(d.replica().id(), x -> new AtomicInteger());
            max.accumulateAndGet(n.incrementAndGet(), Math::max);
            LockSupport.parkNanos(random.nextLong(200_000, 1_000_000)); // the request runs
            n.decrementAndGet();
            d.lease().close();
          }
        }));
      }
      threads.forEach(Thread::start);
      for (Thread th : threads) {
        th.join();
      }
      // Every lease is closed: the slots go as the releases (sent without waiting) arrive.
      long held = heldSlots();
      for (int i = 0; i < 1_000 && held > 0; i++) {
        Thread.sleep(10);
        held = heldSlots();
      }
      long commands = CommandStats.clientCommands(CommandStats.read(redis.server()));
      return new Run(max.get(), routed.get(), atLimit.get(), (double) commands / routed.get(),
          unexpected.get(), held);
    } finally {
      routers.forEach(Router::close);
      stores.forEach(RedisBindingStore::close);
    }
  }

  private static long heldSlots() {
    return Long.parseLong(redis.server().cli("eval", "local n = 0 for _, k in ipairs("
        + "redis.call('KEYS', 'ar:b:inflight:*')) do n = n + redis.call('ZCARD', k) end return n",
        "0").trim());
  }

  @Test
  void slotsOfARouterThatNeverReleasesExpire() throws Exception {
    try (RedisBindingStore store = RedisBindingStore.builder().uri(redis.uri()).build()) {
      var limits = store.fleetLimits();
      Duration lease = Duration.ofSeconds(3);
      for (int i = 0; i < LIMIT; i++) { // a gateway takes every slot, then dies
        assertThat(limits.acquire("dead-end", LIMIT, lease).toCompletableFuture().join())
            .isPresent();
      }
      assertThat(limits.acquire("dead-end", LIMIT, lease).toCompletableFuture().join()).isEmpty();
      boolean healed = false;
      for (int i = 0; i < 2_000 && !healed; i++) { // up to 20 s: the lease time is the subject
        Thread.sleep(10);
        healed = limits.acquire("dead-end", LIMIT, lease).toCompletableFuture().join()
            .isPresent();
      }
      assertThat(healed).as("a slot free again after the lease time").isTrue();
    }
  }

  @Test
  void anAcquireWhoseAnswerIsLostFreesItsSlot() throws Exception {
    redis.server().cli("flushall");
    try (LatencyProxy proxy = new LatencyProxy(redis.server().port());
        RedisBindingStore store = RedisBindingStore.builder().uri(proxy.uri()).build()) {
      var limits = store.fleetLimits();
      proxy.stall(true); // commands reach Redis, replies are held: the client times out (100 ms)
      var f = limits.acquire("lost", LIMIT, Duration.ofMinutes(10)).toCompletableFuture();
      for (int i = 0; i < 1_000 && !f.isDone(); i++) {
        Thread.sleep(10);
      }
      assertThat(f).as("the acquire's answer never came").isCompletedExceptionally();
      proxy.stall(false);
      long held = heldSlots();
      for (int i = 0; i < 1_000 && held > 0; i++) {
        Thread.sleep(10);
        held = heldSlots();
      }
      assertThat(held).as("the slot the script took, freed without waiting for its lease time")
          .isZero();
    }
  }
}
