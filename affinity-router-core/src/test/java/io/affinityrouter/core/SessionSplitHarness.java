package io.affinityrouter.core;

import io.affinityrouter.RepinCause;
import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.ReplicaScorer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Several routers, each with its own view of one binding store behind a {@link FaultyBindingStore},
 * route the same sessions at the library's default timeouts, each preferring another replica (so
 * that racing first turns conflict). Three phases:
 *
 * <ol>
 *   <li><b>first turns</b>, every router racing for every session, under faults; then the late
 *       answers are delivered;
 *   <li><b>turns without faults</b>, until the store's answer for every session has reached every
 *       router (the promise's precondition);
 *   <li><b>later turns under faults</b>, late answers held back until the end.
 * </ol>
 *
 * The result counts, per phase, the sessions routed to more than one replica and the turns that
 * did not go to the replica the store binds the session to at the end. Used for the in-memory store
 * and for real Redis.
 */
public final class SessionSplitHarness {
  /** What the run found. */
  public record Result(int sessions, int firstTurnSplits, int laterSplits, int laterOffStore,
      int laterTurns, int laterDegraded, int laterReconciled, Map<RepinCause, Integer> laterRepins,
      String firstLaterSplit, int late, int lost, int failed) {
    @Override
    public String toString() {
      return String.format("%,d sessions; first turns: %d split; later turns: %,d, %d split, %d "
          + "off the store's replica, %,d degraded, %d reconciled, repins %s%s; faults: %,d late, "
          + "%,d lost, %,d failed", sessions, firstTurnSplits, laterTurns, laterSplits,
          laterOffStore, laterDegraded, laterReconciled, laterRepins,
          firstLaterSplit.isEmpty() ? "" : " (first split: " + firstLaterSplit + ")", late, lost,
          failed);
    }
  }

  private static final String MODEL = "m";
  private static final int LATER_TURNS = 3;
  private static final int IN_FLIGHT = 256;
  private static final Duration STEP = Duration.ofMillis(1);

  private SessionSplitHarness() {}

  /**
   * Runs the three phases with one router per store in {@code stores} (each the router's own
   * faulty view of the shared store; {@code truth} reads the shared store itself).
   */
  public static Result run(List<FaultyBindingStore> stores, BindingStore truth, int sessions,
      long seed) throws Exception {
    int n = stores.size();
    TestClock clock = new TestClock(); // the breakers' back-off; store timeouts are real time
    List<Router> routers = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String preferred = "r" + i;
      routers.add(AffinityRouter.builder().clock(clock).bindingStore(stores.get(i)).topK(1)
          .addScorer(prefer(preferred)).build());
    }
    Map<String, Set<String>> first = new ConcurrentHashMap<>();
    Map<String, Set<String>> later = new ConcurrentHashMap<>();
    Map<String, List<String>> laterTurns = new ConcurrentHashMap<>();
    AtomicInteger degraded = new AtomicInteger();
    Map<RepinCause, AtomicInteger> repins = new ConcurrentHashMap<>();
    try {
      // 1. first turns, racing, under faults
      phase(routers, clock, sessions, seed, 1, first, null, null, null);
      for (FaultyBindingStore s : stores) {
        s.releaseLate(Duration.ofSeconds(30));
      }
      // 2. every router hears the store's answer for every session: breakers closed first
      stores.forEach(s -> s.faults(false));
      clock.advance(Duration.ofMinutes(1));
      closeBreakers(routers, clock);
      hear(routers, clock, sessions);
      // 3. later turns under faults
      stores.forEach(s -> s.faults(true));
      phase(routers, clock, sessions, seed + 2, LATER_TURNS, later, laterTurns, degraded,
          repins);
      for (FaultyBindingStore s : stores) {
        s.releaseLate(Duration.ofSeconds(30));
      }
      // Every lease is closed: a reservation left behind would skew a router's load for good.
      for (Router router : routers) {
        for (ReplicaState state : ((DefaultRouter) router).tracker().states()) {
          if (state.inFlightRequests() != 0) {
            throw new AssertionError(state.id() + " has " + state.inFlightRequests()
                + " requests in flight with every lease closed");
          }
        }
      }
      int firstSplits = 0;
      int laterSplits = 0;
      int offStore = 0;
      int turns = 0;
      String firstLaterSplit = "";
      for (int k = 0; k < sessions; k++) {
        String id = "s" + k;
        Optional<Binding> b = truth.get(new BindingKey(MODEL, "", id)).toCompletableFuture().join();
        String bound = b.map(Binding::replicaId).orElse("(none)");
        firstSplits += first.getOrDefault(id, Set.of()).size() > 1 ? 1 : 0;
        if (later.getOrDefault(id, Set.of()).size() > 1) {
          laterSplits++;
          if (firstLaterSplit.isEmpty()) {
            firstLaterSplit = id + " went to " + laterTurns.get(id) + ", the store binds " + bound;
          }
        }
        for (String turn : laterTurns.getOrDefault(id, List.of())) {
          turns++;
          offStore += turn.startsWith(bound + " ") ? 0 : 1;
        }
      }
      Map<RepinCause, Integer> laterRepins = new java.util.TreeMap<>();
      repins.forEach((c, count) -> laterRepins.put(c, count.get()));
      int lateCount = stores.stream().mapToInt(s -> s.lateAnswers.get()).sum();
      int lostCount = stores.stream().mapToInt(s -> s.lostAnswers.get()).sum();
      int failedCount = stores.stream().mapToInt(s -> s.failedAnswers.get()).sum();
      return new Result(sessions, firstSplits, laterSplits, offStore, turns, degraded.get(),
          repins.getOrDefault(RepinCause.RECONCILED, new AtomicInteger()).get(), laterRepins,
          firstLaterSplit, lateCount, lostCount, failedCount);
    } finally {
      routers.forEach(Router::close);
    }
  }

  /**
   * Routes every session on every router until each has had an answer from the store for it: a
   * decision that was not degraded (a store slower than the timeout, as a busy machine's Redis
   * is, leaves a decision degraded; its turn is routed again).
   */
  private static void hear(List<Router> routers, TestClock clock, int sessions)
      throws InterruptedException {
    List<Replica> fleet = fleet(routers.size());
    for (Router router : routers) {
      for (int k = 0; k < sessions; k++) {
        for (int attempt = 0; ; attempt++) {
          RoutingDecision d = router.select(request("s" + k), fleet);
          d.lease().close();
          if (!d.isDegraded()) {
            break;
          }
          if (attempt > 1_000) {
            throw new AssertionError("the store never answered in time for s" + k);
          }
          clock.advance(Duration.ofSeconds(1)); // past a back-off the breaker may have opened
          Thread.sleep(1);
        }
      }
    }
  }

  /**
   * Routes throw-away sessions on each router until one is not degraded: its breaker is closed. A
   * warm-up that a busy machine's store answers late may open the breaker again, so each miss moves
   * the clock past its back-off.
   */
  private static void closeBreakers(List<Router> routers, TestClock clock)
      throws InterruptedException {
    List<Replica> fleet = fleet(routers.size());
    for (Router router : routers) {
      for (int i = 0; ; i++) {
        RoutingDecision d = router.select(request("warm-up-" + i), fleet);
        d.lease().close();
        if (!d.isDegraded()) {
          break;
        }
        if (i > 1_000) {
          throw new AssertionError("the breaker never closed");
        }
        clock.advance(Duration.ofSeconds(1));
        Thread.sleep(1);
      }
    }
  }

  private static List<Replica> fleet(int n) {
    List<Replica> fleet = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      fleet.add(Replica.builder("r" + i).model(MODEL, io.affinityrouter.ModelState.ACTIVE).build());
    }
    return fleet;
  }

  /**
   * Every router routes {@code turns} turns of every session, the routers on threads of their own,
   * each with up to {@value #IN_FLIGHT} decisions in flight (as a busy gateway has).
   */
  private static void phase(List<Router> routers, TestClock clock, int sessions, long seed,
      int turns,
      Map<String, Set<String>> replicas, Map<String, List<String>> log, AtomicInteger degraded,
      Map<RepinCause, AtomicInteger> repins) throws Exception {
    List<Thread> threads = new ArrayList<>();
    List<Throwable> errors = new ArrayList<>();
    List<Replica> fleet = fleet(routers.size());
    for (int g = 0; g < routers.size(); g++) {
      Router router = routers.get(g);
      SplittableRandom random = new SplittableRandom(seed * 31 + g);
      threads.add(new Thread(() -> {
        try {
          for (int t = 0; t < turns; t++) {
            Semaphore slots = new Semaphore(IN_FLIGHT);
            List<CompletableFuture<?>> turnsDone = new ArrayList<>();
            for (int k : shuffled(sessions, random)) {
              slots.acquire(); // a slot frees as soon as any decision completes, as on an event loop
              clock.advance(STEP); // the breakers' back-off passes as decisions go by
              String id = "s" + k;
              turnsDone.add(router.selectAsync(request(id), fleet).toCompletableFuture()
                  .whenComplete((d, ex) -> {
                    try {
                      if (d != null) {
                        record(id, d, replicas, log, degraded, repins);
                      }
                    } finally {
                      slots.release();
                    }
                  }));
            }
            for (CompletableFuture<?> f : turnsDone) {
              f.join();
            }
          }
        } catch (Throwable e) {
          synchronized (errors) {
            errors.add(e);
          }
        }
      }, "router-" + g));
    }
    threads.forEach(Thread::start);
    for (Thread t : threads) {
      t.join();
    }
    if (!errors.isEmpty()) {
      throw new AssertionError("a router failed", errors.get(0));
    }
  }

  private static void record(String id, RoutingDecision d, Map<String, Set<String>> replicas,
      Map<String, List<String>> log, AtomicInteger degraded,
      Map<RepinCause, AtomicInteger> repins) {
    if (!d.isRouted()) {
      throw new AssertionError("not routed: " + d);
    }
    d.lease().close();
    replicas.computeIfAbsent(id, x -> ConcurrentHashMap.newKeySet()).add(d.replica().id());
    if (log != null) {
      // the replica, then why: a split shows how each turn got where it went
      log.computeIfAbsent(id, x -> Collections.synchronizedList(new ArrayList<>()))
          .add(d.replica().id() + " " + d.reason()
              + d.repinCause().map(c -> "/" + c).orElse(""));
      if (d.reason() == RoutingReason.DEGRADED_FALLBACK) {
        degraded.incrementAndGet();
      }
      d.repinCause().ifPresent(
          c -> repins.computeIfAbsent(c, x -> new AtomicInteger()).incrementAndGet());
    }
  }

  private static int[] shuffled(int n, SplittableRandom random) {
    int[] a = new int[n];
    for (int i = 0; i < n; i++) {
      a[i] = i;
    }
    for (int i = n - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
    return a;
  }

  private static RoutingRequest request(String session) {
    return RoutingRequest.builder().model(MODEL).sessionId(session)
        .promptTokens(new int[] {session.hashCode(), 1, 2, 3}).expectedOutputTokens(16).build();
  }

  /** A small pull toward one replica: each router's candidate differs, far below any repin. */
  private static ReplicaScorer prefer(String replicaId) {
    return new ReplicaScorer() {
      @Override
      public String name() {
        return "prefer-" + replicaId;
      }

      @Override
      public double weightSeconds() {
        return 0.001;
      }

      @Override
      public double score(RoutingRequest request, Replica replica) {
        return replica.id().equals(replicaId) ? 1 : 0;
      }
    };
  }
}
