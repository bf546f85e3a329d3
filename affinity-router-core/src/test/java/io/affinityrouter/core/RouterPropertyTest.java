package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import io.affinityrouter.ModelState;
import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.RequestLease;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/** QuickTheories properties of the router, 1,000 cases each. */
class RouterPropertyTest {
  private static final int EXAMPLES = 1000;
  private static final ExecutorService POOL = Executors.newFixedThreadPool(8);

  @AfterAll
  static void shutdown() {
    POOL.shutdownNow();
  }

  private static AffinityRouter.Builder small(TestClock clock, long seed) {
    return AffinityRouter.builder().clock(clock).random(new SplittableRandom(seed))
        .prefixIndexEntries(4096).maxPromptBlocks(256);
  }

  /** A random fleet: health, model states, limits and loads drawn from the seed. */
  static List<Replica> fleet(SplittableRandom rnd, int n) {
    List<Replica> list = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Replica.Builder b = Replica.builder("r" + i);
      int h = rnd.nextInt(10);
      b.health(h < 7 ? ReplicaHealth.HEALTHY : h < 8 ? ReplicaHealth.DRAINING
          : ReplicaHealth.UNHEALTHY);
      int m = rnd.nextInt(10);
      b.model("m", m < 7 ? ModelState.ACTIVE : m < 9 ? ModelState.SLEEPING : ModelState.LOADING);
      if (rnd.nextBoolean()) {
        b.model("other", ModelState.ACTIVE);
      }
      if (rnd.nextInt(3) == 0) {
        b.maxInFlightRequests(1 + rnd.nextInt(3));
      }
      if (rnd.nextInt(4) == 0) {
        b.maxInFlightTokens(500 + rnd.nextInt(5000));
      }
      b.load(ReplicaLoad.builder().runningRequests(rnd.nextInt(50)).waitingRequests(rnd.nextInt(10))
          .kvUsage(rnd.nextDouble()).kvCapacityTokens(rnd.nextInt(3) == 0 ? 0 : 100_000)
          .build());
      list.add(b.build());
    }
    return list;
  }

  static RoutingRequest request(SplittableRandom rnd) {
    RoutingRequest.Builder b = RoutingRequest.builder()
        .promptTokens(Prompts.tokens(rnd.nextInt(8), 16 * (1 + rnd.nextInt(40))))
        .expectedOutputTokens(rnd.nextInt(300));
    if (rnd.nextInt(4) != 0) {
      b.model("m");
    }
    if (rnd.nextBoolean()) {
      b.sessionId("s" + rnd.nextInt(5));
    }
    return b.build();
  }

  static boolean serves(Replica r, RoutingRequest req) {
    if (r.health() == ReplicaHealth.UNHEALTHY) {
      return false;
    }
    if (req.model().isEmpty()) {
      return r.models().containsValue(ModelState.ACTIVE);
    }
    return r.modelState(req.model().get()).orElse(null) == ModelState.ACTIVE;
  }

  @Test
  void chosenReplicaIsAlwaysAnEligibleReplicaPassedIn() {
    qt().withExamples(EXAMPLES).forAll(longs().all(), integers().between(0, 10))
        .checkAssert((seed, n) -> {
          SplittableRandom rnd = new SplittableRandom(seed);
          List<Replica> fleet = fleet(rnd, n);
          Router router = small(new TestClock(), seed).build();
          Map<String, Integer> open = new HashMap<>();
          List<RequestLease> leases = new ArrayList<>();
          for (int i = 0; i < 12; i++) {
            RoutingRequest req = request(rnd);
            RoutingDecision d = router.select(req, fleet);
            if (d.isRouted()) {
              Replica r = d.replica();
              assertThat(fleet).contains(r);
              assertThat(serves(r, req)).as("serves %s", r).isTrue();
              int now = open.merge(r.id(), 1, Integer::sum);
              assertThat(now).isLessThanOrEqualTo(r.maxInFlightRequests().orElse(Integer.MAX_VALUE));
              leases.add(d.lease());
            } else {
              assertThat(d.reason().isRouted()).isFalse();
              if (d.reason() != RoutingReason.ALL_AT_LIMIT) {
                assertThat(fleet.stream().filter(r -> serves(r, req))
                    .filter(r -> r.health() == ReplicaHealth.HEALTHY)).isEmpty();
              }
            }
            if (!leases.isEmpty() && rnd.nextInt(3) == 0) {
              RequestLease l = leases.remove(rnd.nextInt(leases.size()));
              open.merge(l.replicaId(), -1, Integer::sum);
              l.close();
            }
          }
        });
  }

  @Test
  void noReplicaGoesOverItsLimitsUnderEightThreads() {
    qt().withExamples(EXAMPLES).forAll(longs().all(), integers().between(1, 4))
        .checkAssert((seed, n) -> {
          SplittableRandom rnd = new SplittableRandom(seed);
          List<Replica> fleet = new ArrayList<>();
          for (int i = 0; i < n; i++) {
            fleet.add(Replica.builder("r" + i).maxInFlightRequests(1 + rnd.nextInt(3))
                .maxInFlightTokens(300 + rnd.nextInt(600)).build());
          }
          Router router = small(new TestClock(), seed).random(
              java.util.concurrent.ThreadLocalRandom.current()).build();
          Map<String, AtomicInteger> requests = new HashMap<>();
          Map<String, AtomicInteger> tokens = new HashMap<>();
          for (Replica r : fleet) {
            requests.put(r.id(), new AtomicInteger());
            tokens.put(r.id(), new AtomicInteger());
          }
          AtomicReference<String> violation = new AtomicReference<>();
          CountDownLatch start = new CountDownLatch(1);
          List<Future<?>> done = new ArrayList<>();
          for (int t = 0; t < 8; t++) {
            int thread = t;
            done.add(POOL.submit(() -> {
              start.await();
              for (int i = 0; i < 8; i++) {
                int size = 100 + 16 * ((thread + i) % 8);
                RoutingDecision d = router.select(RoutingRequest.builder()
                    .promptTokens(new int[size]).expectedOutputTokens(50).build(), fleet);
                if (!d.isRouted()) {
                  continue;
                }
                Replica r = d.replica();
                int req = requests.get(r.id()).incrementAndGet();
                int tok = tokens.get(r.id()).addAndGet(size + 50);
                if (req > r.maxInFlightRequests().getAsInt()
                    || (req > 1 && tok > r.maxInFlightTokens().getAsLong())) {
                  violation.compareAndSet(null, r + " had " + req + " requests, " + tok + " tokens");
                }
                Thread.yield();
                requests.get(r.id()).decrementAndGet();
                tokens.get(r.id()).addAndGet(-(size + 50));
                d.lease().close();
              }
              return null;
            }));
          }
          start.countDown();
          try {
            for (Future<?> f : done) {
              f.get(30, TimeUnit.SECONDS);
            }
          } catch (Exception e) {
            throw new AssertionError(e);
          }
          assertThat(violation.get()).isNull();
        });
  }

  @Test
  void pinnedSessionStaysWhileEligibleAndNotOverloaded() {
    qt().withExamples(EXAMPLES).forAll(longs().all(), integers().between(2, 8))
        .checkAssert((seed, n) -> {
          SplittableRandom rnd = new SplittableRandom(seed);
          Router router = small(new TestClock(), seed).build();
          List<Replica> fleet = Prompts.replicas(n);
          int[] context = Prompts.tokens(seed, 64 + rnd.nextInt(2000));
          RoutingDecision first = router.select(Prompts.session("s", context), fleet);
          first.lease().close();
          String bound = first.replica().id();
          for (int turn = 0; turn < 6; turn++) {
            context = Prompts.concat(context, Prompts.tokens(seed + turn, 1 + rnd.nextInt(500)));
            int boundWaiting = rnd.nextInt(5);
            int boundRunning = rnd.nextInt(64);
            List<Replica> now = new ArrayList<>();
            for (Replica r : fleet) {
              if (r.id().equals(bound)) {
                now.add(r.withLoad(ReplicaLoad.builder().waitingRequests(boundWaiting)
                    .runningRequests(boundRunning).build()));
              } else {
                now.add(r.toBuilder().health(rnd.nextInt(4) == 0 ? ReplicaHealth.UNHEALTHY
                        : ReplicaHealth.HEALTHY)
                    .load(ReplicaLoad.builder().waitingRequests(boundWaiting + rnd.nextInt(5))
                        .runningRequests(boundRunning + rnd.nextInt(64)).build()).build());
              }
            }
            RoutingDecision d = router.select(Prompts.session("s", context), now);
            assertThat(d.replica().id()).isEqualTo(bound);
            assertThat(d.reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
            d.lease().close();
          }
        });
  }

  @Test
  void sameSeedAndClockGiveTheSameDecisions() {
    qt().withExamples(EXAMPLES).forAll(longs().all(), integers().between(1, 10))
        .checkAssert((seed, n) -> {
          List<String> a = run(seed, n);
          List<String> b = run(seed, n);
          assertThat(b).isEqualTo(a);
        });
  }

  private static List<String> run(long seed, int n) {
    SplittableRandom rnd = new SplittableRandom(seed);
    TestClock clock = new TestClock();
    Router router = small(clock, seed).rampUp(Duration.ofSeconds(30), 0.1).build();
    List<Replica> fleet = fleet(rnd, n);
    List<String> out = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      RoutingDecision d = router.select(request(rnd), fleet);
      out.add(d.reason() + "/" + (d.isRouted() ? d.replica().id() + "/" + d.matchedBlocks() + "/"
          + d.bindingGeneration() : ""));
      if (d.isRouted() && rnd.nextBoolean()) {
        d.lease().close();
      }
      clock.advance(Duration.ofMillis(rnd.nextInt(5000)));
    }
    return out;
  }
}
