package io.affinityrouter.core;

import static io.affinityrouter.core.Prompts.anonymous;
import static io.affinityrouter.core.Prompts.concat;
import static io.affinityrouter.core.Prompts.tokens;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Pods that come and go for months: the router forgets replicas that are gone (told, or unused
 * for the idle time), its per-replica memory follows the live fleet, and fresh replicas get the
 * prefix locality the first ones had.
 */
class ReplicaChurnTest {
  private final TestClock clock = new TestClock();

  private DefaultRouter router(Duration idle) {
    return (DefaultRouter) AffinityRouter.builder().clock(clock).replicaIdleTimeout(idle)
        .executor(Runnable::run).prefixIndexEntries(1 << 16).build();
  }

  /**
   * Of {@code n} prompts, how many a second request sharing the prefix sends where the first went
   * because the index says that replica holds the prefix (not by the placement hash alone).
   */
  private static int prefixLocal(DefaultRouter router, List<Replica> pair, long seed, int n) {
    int local = 0;
    for (int i = 0; i < n; i++) {
      int[] prefix = tokens(seed + i, 512);
      RoutingDecision first = router.select(anonymous(concat(prefix, tokens(-1 - i, 16))), pair);
      first.lease().close();
      RoutingDecision second = router.select(anonymous(concat(prefix, tokens(-1000 - i, 16))),
          pair);
      second.lease().close();
      if (second.replica().id().equals(first.replica().id())
          && second.matchedBlocks() * 16 >= prefix.length) {
        local++;
      }
    }
    return local;
  }

  private static void routeTwice(DefaultRouter router, List<Replica> pair, long seed) {
    for (int i = 0; i < 2; i++) {
      RoutingDecision d = router.select(anonymous(tokens(seed * 2 + i, 256)), pair);
      assertThat(d.isRouted()).isTrue();
      d.lease().close();
    }
  }

  @Test
  void tenThousandIdsLaterFreshReplicasKeepFullPrefixLocalityAndMemoryFollowsTheLiveFleet() {
    DefaultRouter router = router(AffinityRouter.Builder.DEFAULT_REPLICA_IDLE_TIMEOUT);
    assertThat(prefixLocal(router, List.of(Replica.of("first-a"), Replica.of("first-b")), 1, 20))
        .isEqualTo(20);
    int maxTracked = 0;
    for (int i = 0; i < 5_000; i++) { // 10,000 ids, two at a time, each pair routed twice
      routeTwice(router, List.of(Replica.of("pod-" + i + "-a"), Replica.of("pod-" + i + "-b")), i);
      clock.advance(Duration.ofSeconds(5));
      maxTracked = Math.max(maxTracked, router.trackedReplicas());
    }
    // at most the ids used within the idle time (10 min / 5 s pairs) plus one sweep's worth
    assertThat(maxTracked).isLessThanOrEqualTo(2 * (600 / 5 + 2 + 2));

    List<Replica> fresh = List.of(Replica.of("fresh-a"), Replica.of("fresh-b"));
    assertThat(prefixLocal(router, fresh, 100, 20)).isEqualTo(20);
    clock.advance(Duration.ofMinutes(12));
    router.refresh(fresh); // a sweep is due: the churned ids are retired, their ordinals quarantined
    clock.advance(Duration.ofSeconds(LoadTracker.QUARANTINE_MILLIS / 1000 + 11));
    router.refresh(fresh); // and cleared from the index
    assertThat(router.trackedReplicas()).isEqualTo(2);
    assertThat(prefixLocal(router, fresh, 200, 20)).isEqualTo(20);
  }

  @Test
  void withoutRetirementTheOrdinalSpaceRunsOutAndFreshReplicasMatchNothing() {
    DefaultRouter router = router(Duration.ZERO);
    for (int i = 0; i < PrefixIndex.MAX_ORDINALS / 2 + 1; i++) {
      routeTwice(router, List.of(Replica.of("pod-" + i + "-a"), Replica.of("pod-" + i + "-b")), i);
    }
    List<Replica> fresh = List.of(Replica.of("fresh-a"), Replica.of("fresh-b"));
    assertThat(router.tracker().state("fresh-a").ordinal()).isEqualTo(LoadTracker.NO_ORDINAL);
    assertThat(prefixLocal(router, fresh, 100, 20)).isZero();
  }

  @Test
  void aRetiredReplicaIsForgottenAndItsOrdinalReusedOnlyOnceTheIndexHoldsNothingOfIt() {
    DefaultRouter router = router(Duration.ZERO);
    List<Replica> gone = List.of(Replica.of("gone"));
    int[] prompt = tokens(7, 1024);
    router.select(anonymous(prompt), gone).lease().close();
    int ordinal = router.tracker().state("gone").ordinal();
    long entries = router.index.size();
    assertThat(entries).isPositive();

    assertThat(router.retire("gone")).isTrue();
    assertThat(router.retire("gone")).as("already forgotten").isFalse();
    assertThat(router.trackedReplicas()).isZero();
    // quarantined: a new replica takes another ordinal, the old entries stay until the scan
    assertThat(router.tracker().state("next").ordinal()).isNotEqualTo(ordinal);
    clock.advance(Duration.ofMillis(LoadTracker.QUARANTINE_MILLIS + LoadTracker.SWEEP_MILLIS));
    router.refresh(List.of(Replica.of("next")));
    assertThat(router.index.size()).isZero();
    RoutingRequest again = anonymous(prompt);
    assertThat(router.tracker().state("heir").ordinal()).isEqualTo(ordinal);
    RoutingDecision d = router.select(again, List.of(Replica.of("heir")));
    assertThat(d.isRouted()).isTrue();
    assertThat(d.matchedBlocks()).as("the heir inherits nothing").isZero();
  }

  @Test
  void aReplicaWithRequestsInFlightIsNotRetiredForIdlenessAndItsLeasesStillClose() {
    DefaultRouter router = router(Duration.ofMinutes(1));
    List<Replica> one = List.of(Replica.of("busy"));
    RoutingDecision open = router.select(anonymous(tokens(1, 64)), one);
    clock.advance(Duration.ofMinutes(5));
    router.refresh(List.of());
    router.refresh(List.of()); // the sweep ran; the replica is kept while a lease is open
    assertThat(router.tracker().states()).extracting(ReplicaState::id).containsExactly("busy");
    open.lease().close();
    clock.advance(Duration.ofSeconds(11));
    router.refresh(List.of());
    assertThat(router.trackedReplicas()).isZero();
    router.retire("busy"); // nothing to forget
  }

  @Test
  void routingWhileReplicasAreRetiredAndOrdinalsReusedStaysConsistent() throws Exception {
    DefaultRouter router = (DefaultRouter) AffinityRouter.builder().clock(clock)
        .replicaIdleTimeout(Duration.ofSeconds(30)).prefixIndexEntries(1 << 16).build();
    int threads = 3;
    int perThread = 6_000;
    java.util.concurrent.atomic.AtomicInteger window = new AtomicInteger();
    java.util.concurrent.ConcurrentLinkedQueue<Throwable> failures =
        new java.util.concurrent.ConcurrentLinkedQueue<>();
    java.util.concurrent.CountDownLatch start = new java.util.concurrent.CountDownLatch(1);
    List<Thread> workers = new java.util.ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int seed = t;
      workers.add(new Thread(() -> {
        try {
          start.await();
          java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
          for (int i = 0; i < perThread; i++) {
            int w = window.get();
            List<Replica> pods = List.of(Replica.of("pod-" + w), Replica.of("pod-" + (w + 1)),
                Replica.of("pod-" + (w + 2)));
            RoutingDecision d = router.select(anonymous(tokens(random.nextInt(50), 128)), pods);
            assertThat(d.isRouted()).isTrue();
            assertThat(pods).contains(d.replica());
            d.lease().close();
            if (seed == 0 && i % 20 == 0) {
              window.incrementAndGet(); // the fleet moves on: one pod out, one in
              clock.advance(Duration.ofSeconds(5));
              router.retire("pod-" + (w - 1));
            }
          }
        } catch (Throwable e) {
          failures.add(e);
        }
      }));
    }
    workers.forEach(Thread::start);
    start.countDown();
    for (Thread w : workers) {
      w.join(Duration.ofMinutes(2).toMillis());
    }
    assertThat(failures).isEmpty();
    assertThat(router.tracker().states()).allSatisfy(s -> {
      assertThat(s.inFlightRequests()).isZero();
      assertThat(s.inFlightTokens()).isZero();
    });
    // ids seen within the idle time, plus one sweep and the executor's delay
    assertThat(router.trackedReplicas()).isLessThan(40);
  }

  @Test
  void aFailingMaintenanceExecutorIsRetriedAtTheNextSweep() {
    AtomicInteger refused = new AtomicInteger();
    DefaultRouter router = (DefaultRouter) AffinityRouter.builder().clock(clock)
        .replicaIdleTimeout(Duration.ofMinutes(1)).executor(r -> {
          if (refused.getAndIncrement() == 0) {
            throw new java.util.concurrent.RejectedExecutionException("full");
          }
          r.run();
        }).build();
    router.select(anonymous(tokens(1, 64)), List.of(Replica.of("a"))).lease().close();
    clock.advance(Duration.ofMinutes(2));
    router.refresh(List.of()); // refused
    assertThat(router.trackedReplicas()).isEqualTo(1);
    clock.advance(Duration.ofSeconds(11));
    router.refresh(List.of());
    assertThat(refused.get()).isEqualTo(2);
    assertThat(router.trackedReplicas()).isZero();
  }
}
