package io.affinityrouter.examples.simulator.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.affinityrouter.examples.simulator.capacity.CapacitySweep;
import io.affinityrouter.examples.simulator.fleet.EngineConfig;
import io.affinityrouter.examples.simulator.strategy.Route;
import io.affinityrouter.examples.simulator.strategy.StrategyRegistry;
import io.affinityrouter.examples.simulator.workload.AgentSessionGenerator;
import io.affinityrouter.examples.simulator.workload.MooncakeTraceReader;
import io.affinityrouter.examples.simulator.workload.Traces;
import io.affinityrouter.examples.simulator.workload.Workload;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class SimulationTest {
  /** Every strategy, plus the real router fed with the engines' KV events. */
  private static final StrategyRegistry REGISTRY =
      StrategyRegistry.standard().withRouterVariants("kv=kvEvents:true");
  private static final int REPLICAS = 4;

  /** The first requests of the Mooncake conversation trace at 75% load on {@link #REPLICAS}. */
  static Workload mooncake(int requests) {
    Workload raw = MooncakeTraceReader.read(
        Traces.FOLDER.resolve("mooncake_conversation_trace.jsonl"), "mooncake", requests);
    double capacity = LoadCalibration.requestsPerSecond(raw, EngineConfig.defaults(), 200);
    double natural = raw.size() / (raw.spanNanos() / 1e9);
    return raw.compressed(0.75 * REPLICAS * capacity / natural);
  }

  static Workload agents(int sessions) {
    AgentSessionGenerator.Config c = AgentSessionGenerator.Config.defaults(3).withSessions(sessions);
    return AgentSessionGenerator.generate(c, "agents");
  }

  private static SimulationConfig config(long seed) {
    return SimulationConfig.steady(REPLICAS, 2, seed);
  }

  private static RunResult run(Workload w, String strategy, SimulationConfig c) {
    return Simulation.run(w, REGISTRY.select(List.of(strategy)).get(0), c, line -> { });
  }

  @Test
  void isDeterministicUnderASeed() {
    Workload w = mooncake(600);
    for (String s : List.of("affinity-router", "kv", "random", "sglang-cache-aware")) {
      RunResult a = run(w, s, config(11));
      RunResult b = run(w, s, config(11));
      assertThat(a.completed()).isEqualTo(600);
      assertThat(b.cachedTokens()).as(s).isEqualTo(a.cachedTokens());
      assertThat(b.ttftMicros()).as(s).isEqualTo(a.ttftMicros());
      assertThat(b.e2eMicros()).as(s).isEqualTo(a.e2eMicros());
      assertThat(b.busyNanos()).as(s).containsExactly(a.busyNanos());
      assertThat(b.moves()).as(s).isEqualTo(a.moves());
    }
    RunResult other = run(w, "random", config(12));
    assertThat(other.ttftMicros()).isNotEqualTo(run(w, "random", config(11)).ttftMicros());
  }

  @Test
  void pastCapacityHeldRequestsAreReleasedByEventsDeterministicallyAndServeMoreWithinTheSlo() {
    StrategyRegistry.Entry hold = StrategyRegistry.standard()
        .withRouterVariants("hold=hold:true,maxHoldMillis:1000").select(List.of("hold")).get(0);
    Workload w = agents(1500).compressed(4.0); // far past what four replicas carry
    RunResult a = Simulation.run(w, hold, config(3), line -> { });
    RunResult b = Simulation.run(w, hold, config(3), line -> { });
    RunResult plain = run(w, "affinity-router", config(3));
    assertThat(b.ttftMicros()).isEqualTo(a.ttftMicros());
    assertThat(a.heldRequests()).isPositive();
    // every request is served or given up on by its client after its retries; none is lost
    assertThat(a.completed() + a.dropped()).isEqualTo(w.size());
    assertThat(a.goodputPerSecond(300)).isGreaterThan(plain.goodputPerSecond(300));
    assertThat(a.ttftMillis(90)).isLessThan(plain.ttftMillis(90));
  }

  @Test
  void gatewaysShareTheirQueuesThroughTheStoreByDefaultAndStayDeterministic() {
    StrategyRegistry.Entry isolated = StrategyRegistry.standard()
        .withRouterVariants("x=loadExchangeMillis:0").select(List.of("x")).get(0);
    Workload w = mooncake(600);
    RunResult a = run(w, "affinity-router", config(11));
    RunResult b = run(w, "affinity-router", config(11));
    assertThat(a.completed()).isEqualTo(600);
    assertThat(b.ttftMicros()).isEqualTo(a.ttftMicros());
    // two gateways: by default each counts the other's queue, so some decisions differ
    assertThat(a.ttftMicros())
        .isNotEqualTo(Simulation.run(w, isolated, config(11), line -> { }).ttftMicros());
  }

  @Test
  void noStrategyExceedsTheInfiniteCacheBoundOrBeatsTheTtftFloor() {
    for (Workload w : List.of(mooncake(800), agents(60))) {
      RunResult bound = run(w, "infinite-cache", config(5));
      assertThat(bound.ofBound()).as("the bound's own run").isCloseTo(1.0, within(0.02));
      assertThat(bound.ttftFloorMillis(99)).as("a floor above zero").isPositive();
      for (StrategyRegistry.Entry e : REGISTRY.all()) {
        RunResult r = Simulation.run(w, e, config(5), line -> { });
        String what = e.name() + " on " + w.name();
        assertThat(r.completed()).as(e.name()).isEqualTo(w.size());
        assertThat(r.cachedTokens()).as(what).isLessThanOrEqualTo(r.boundTokens());
        assertThat(r.hitRate()).as(what).isLessThanOrEqualTo(bound.hitRate() + 0.01);
        // The same requests have the same floors, whatever the strategy; none is beaten.
        assertThat(r.ttftFloorMicros()).as(what).isEqualTo(bound.ttftFloorMicros());
        for (double p = 0; p <= 100; p += 0.5) {
          assertThat(r.ttftMillis(p)).as(what + " at p" + p)
              .isGreaterThanOrEqualTo(r.ttftFloorMillis(p));
        }
      }
    }
  }

  @Test
  void aStrategyThatAlwaysPicksOneReplicaShowsTheImbalance() {
    StrategyRegistry.Entry first = new StrategyRegistry.Entry("first", "always replica 0",
        (c, g) -> (request, fleet) -> Route.of(0, "first"), false);
    Workload w = mooncake(300);
    RunResult skewed = Simulation.run(w, first, config(1), line -> { });
    RunResult spread = run(w, "least-request", config(1));
    assertThat(skewed.busiestOverMean()).isCloseTo(REPLICAS, within(0.01));
    assertThat(spread.busiestOverMean()).isLessThan(1.5);
    assertThat(skewed.ttftMillis(99)).isGreaterThan(2 * spread.ttftMillis(99));
  }

  @Test
  void closedLoopTurnsHeldBackByOneThrashingReplicaAreLoadNotServed() {
    // half of the sessions pinned to replica 0, the others spread over the rest: a hot replica
    StrategyRegistry.Entry first = new StrategyRegistry.Entry("hot", "half the sessions on 0",
        (c, g) -> (request, fleet) -> Route.of(request.session().hashCode() % 2 == 0 ? 0
            : 1 + (int) Math.floorMod(request.session().hashCode(), 3), "hot"), false);
    // 300 agent sessions started at 8 a second: consistent hashing keeps up with their pacing;
    // the hot replica decodes half of them in one batch, its sessions' turns come back late, and
    // the fleet's p90 TTFT passes while it serves less than offered
    Workload w = AgentSessionGenerator.generate(AgentSessionGenerator.Config.defaults(3)
        .withSessions(300).withSessionsPerSecond(8), "agents");
    RunResult spread = run(w, "consistent-hash", config(1));
    RunResult skewed = Simulation.run(w, first, config(1), line -> { });
    assertThat(spread.completed()).isEqualTo(w.size());
    assertThat(skewed.completed()).isEqualTo(w.size());
    assertThat(skewed.ttftMillis(90)).isLessThan(300);
    assertThat(spread.servedRatio()).isGreaterThan(CapacitySweep.MIN_SERVED_RATIO);
    assertThat(skewed.servedRatio()).isLessThan(CapacitySweep.MIN_SERVED_RATIO);
    assertThat(skewed.requestsPerSecond()).isLessThan(0.9 * spread.requestsPerSecond());
    // so the sweep carries the rate for one and not for the other
    assertThat(CapacitySweep.stress(spread, 300)).isLessThanOrEqualTo(1);
    assertThat(CapacitySweep.stress(skewed, 300)).isGreaterThan(1);
  }

  @Test
  void sessionsWhoseClientsGiveUpAreCountedByWhetherAnyTurnWasServed() {
    // refused for good: every turn of a third of the sessions, and the later turns of half the rest
    Set<String> started = new java.util.HashSet<>();
    StrategyRegistry.Entry refusing = new StrategyRegistry.Entry("refusing", "refuses some",
        (c, g) -> (request, fleet) -> {
          int h = Math.floorMod(request.session().hashCode(), 6);
          if (h % 3 == 0 || h % 2 == 0 && started.contains(request.session())) {
            return null;
          }
          started.add(request.session());
          return Route.of(Math.floorMod(request.session().hashCode(), REPLICAS), "refusing");
        }, false);
    Workload w = agents(60);
    long expectNew = 0;
    long expectReturning = 0;
    for (var head : w.heads()) {
      int h = Math.floorMod(head.session().hashCode(), 6);
      if (h % 3 == 0) {
        expectNew++;
      } else if (h % 2 == 0 && head.next() != null) {
        expectReturning++;
      }
    }
    RunResult r = Simulation.run(w, refusing, config(5), line -> { });
    assertThat(expectNew).isPositive();
    assertThat(expectReturning).isPositive();
    assertThat(r.gaveUpNew()).isEqualTo(expectNew);
    assertThat(r.gaveUpReturning()).isEqualTo(expectReturning);
    assertThat(r.completed() + r.dropped()).isEqualTo(w.size());
  }

  /** Each session's gateways (the strategy instance that routed its turns) under {@code front}. */
  private static Map<String, Set<Integer>> gatewaysBySession(Workload w,
      SimulationConfig.Front front) {
    Map<String, Set<Integer>> seen = new HashMap<>();
    StrategyRegistry.Entry recording = new StrategyRegistry.Entry("recording",
        "records its gateway", (c, g) -> (request, fleet) -> {
          seen.computeIfAbsent(request.session(), k -> new TreeSet<>()).add(g);
          return Route.of(Math.floorMod(request.session().hashCode(), REPLICAS), "recording");
        }, false);
    RunResult r = Simulation.run(w, recording,
        SimulationConfig.steady(REPLICAS, 4, 3).withFront(front), line -> { });
    assertThat(r.completed()).isEqualTo(w.size());
    return seen;
  }

  @Test
  void aSessionFrontDoorSendsEveryTurnOfASessionThroughOneGateway() {
    Workload w = agents(40);
    Map<String, Set<Integer>> bySession = gatewaysBySession(w, SimulationConfig.Front.SESSION);
    assertThat(bySession).hasSize(40);
    Set<Integer> used = new TreeSet<>();
    for (Map.Entry<String, Set<Integer>> e : bySession.entrySet()) {
      assertThat(e.getValue()).as(e.getKey()).hasSize(1);
      used.addAll(e.getValue());
    }
    assertThat(used).as("sessions spread over the gateways").containsExactly(0, 1, 2, 3);
    // by request id, a session of 4-16 turns reaches several gateways
    Map<String, Set<Integer>> byRequest = gatewaysBySession(w, SimulationConfig.Front.REQUEST);
    assertThat(byRequest.values().stream().filter(g -> g.size() > 1).count())
        .isGreaterThan(30);
  }

  @Test
  void aLostReplicasRequestsAreRetriedAndItsSessionsRepinned() {
    Workload w = agents(80);
    SimulationConfig c = new SimulationConfig(REPLICAS, REPLICAS, 2,
        SimulationConfig.DEFAULT_SCRAPE_NANOS, SimulationConfig.DEFAULT_RETRY_NANOS,
        EngineConfig.defaults(), List.of(new FleetEvent(w.spanNanos() / 2, 0,
        FleetEvent.Kind.LOST)), 9);
    RunResult r = run(w, "affinity-router", c);
    assertThat(r.completed()).isEqualTo(w.size());
    assertThat(r.failedOver()).isPositive();
    assertThat(r.repins()).isPositive();
    assertThat(r.moves()).containsKey("SESSION_REPINNED/REPLICA_GONE");
    int[] last = r.loadSeries().get(r.loadSeries().size() - 1);
    assertThat(last[0]).isEqualTo(-1);
  }

  @Test
  void repinsAreCountedByCauseAndByTheGatewayOfTheSessionsPreviousTurn() {
    Workload w = agents(80);
    SimulationConfig c = new SimulationConfig(REPLICAS, REPLICAS, 4,
        SimulationConfig.DEFAULT_SCRAPE_NANOS, SimulationConfig.DEFAULT_RETRY_NANOS,
        EngineConfig.defaults(), List.of(new FleetEvent(w.spanNanos() / 2, 0,
        FleetEvent.Kind.LOST)), 9);
    RunResult spread = run(w, "affinity-router", c);
    RunResult sticky = run(w, "affinity-router", c.withFront(SimulationConfig.Front.SESSION));
    for (RunResult r : List.of(spread, sticky)) {
      assertThat(r.repins()).isPositive();
      assertThat(r.repinsByCause().values().stream().mapToLong(Long::longValue).sum())
          .isEqualTo(r.repins());
      assertThat(r.repinsByCause().keySet())
          .allSatisfy(k -> assertThat(k).matches("[A-Z_]+/(same|other)-gateway"));
    }
    // by request id, three turns in four come from another gateway than the turn before
    long followUps = w.size() - 80;
    assertThat(spread.crossGatewayTurns()).isBetween(followUps / 2, followUps);
    assertThat(spread.repinsByCause()).containsKey("REPLICA_GONE/other-gateway");
    assertThat(spread.crossGatewayRepinRate())
        .isEqualTo((double) spread.crossGatewayRepins() / spread.crossGatewayTurns());
    // by session id, never
    assertThat(sticky.crossGatewayTurns()).isZero();
    assertThat(sticky.crossGatewayRepins()).isZero();
    assertThat(sticky.crossGatewayRepinRate()).isZero();
    assertThat(sticky.repinsByCause()).containsKey("REPLICA_GONE/same-gateway");
  }

  @Test
  void aReplicaReadyMidRunReceivesWork() {
    Workload w = mooncake(600);
    SimulationConfig c = new SimulationConfig(REPLICAS, REPLICAS - 1, 4,
        SimulationConfig.DEFAULT_SCRAPE_NANOS, SimulationConfig.DEFAULT_RETRY_NANOS,
        EngineConfig.defaults(), List.of(new FleetEvent(w.spanNanos() / 3, REPLICAS - 1,
        FleetEvent.Kind.READY)), 9);
    for (String s : List.of("affinity-router", "aibrix-topk", "least-request")) {
      RunResult r = run(w, s, c);
      assertThat(r.completed()).as(s).isEqualTo(600);
      assertThat(r.busyNanos()[REPLICAS - 1]).as(s).isPositive();
    }
  }

  @Test
  void atLightLoadTheRouterLeavesASleepingModelAsleepAndPeersWakeIt() {
    Workload w = agents(12); // queues stay under the 100 ms wake threshold
    SimulationConfig c = config(4).withAsleep(1, SimulationConfig.DEFAULT_WAKE_NANOS);
    int sleeping = REPLICAS - 1;
    RunResult ours = run(w, "affinity-router", c);
    RunResult peer = run(w, "least-request", c);
    assertThat(ours.completed()).isEqualTo(w.size());
    assertThat(ours.wakes()).isZero();
    assertThat(ours.busyNanos()[sleeping]).isZero();
    assertThat(peer.completed()).isEqualTo(w.size());
    assertThat(peer.wakes()).isEqualTo(1);
    assertThat(peer.busyNanos()[sleeping]).isPositive();
    // the request that woke the replica waited for the wake-up
    assertThat(peer.ttftMillis(100))
        .isGreaterThan(SimulationConfig.DEFAULT_WAKE_NANOS / 1e6);
  }

  @Test
  void underPressureTheRouterWakesTheSleepingReplicaWithoutRoutingToIt() {
    // The Mooncake trace at 75% of four replicas' capacity, on three awake ones: queues build, the
    // router asks for the fourth, and the fleet wakes it (a gateway's POST /wake_up).
    Workload w = mooncake(600);
    SimulationConfig c = config(4).withAsleep(1, SimulationConfig.DEFAULT_WAKE_NANOS);
    RunResult ours = run(w, "affinity-router", c);
    assertThat(ours.completed()).isEqualTo(w.size());
    assertThat(ours.wakes()).isEqualTo(1);
    assertThat(ours.busyNanos()[REPLICAS - 1]).isPositive();
  }
}
