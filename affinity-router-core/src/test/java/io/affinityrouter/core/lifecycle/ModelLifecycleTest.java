package io.affinityrouter.core.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import io.affinityrouter.ModelState;
import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.RequestLease;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.lifecycle.LifecycleAction.Kind;
import io.affinityrouter.core.lifecycle.LifecycleAction.Reason;
import io.affinityrouter.spi.LifecycleLease;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The lifecycle's decisions on a scripted fleet: replicas named {@code gpu/model} share their GPU's
 * memory, the actuator flips the fleet's model states when it answers, time is injected.
 */
class ModelLifecycleTest {
  private static final long GIB = 1L << 30;

  private final AtomicLong nanos = new AtomicLong(1_000_000_000_000L);
  private final Fleet fleet = new Fleet();

  private void advance(Duration d) {
    nanos.addAndGet(d.toNanos());
  }

  private ModelLifecycle.Builder lifecycle(ModelClaim... claims) {
    return ModelLifecycle.builder().claims(List.of(claims)).fleet(fleet::replicas)
        .actuator(fleet).gpuGroup(r -> r.id().substring(0, r.id().indexOf('/')))
        .gpuMemoryBytes(80 * GIB).ticker(nanos::get);
  }

  private static ModelClaim claim(String model, int min, Duration idle) {
    return ModelClaim.builder(model).gpuMemoryBytes(40 * GIB).minAwake(min).idleTimeout(idle)
        .build();
  }

  private static List<LifecycleAction> round(ModelLifecycle lifecycle) {
    return lifecycle.runOnce().toCompletableFuture().join();
  }

  /** The router routed a request for {@code model} to {@code replicaId}. */
  private void routed(ModelLifecycle lifecycle, String replicaId, String model) {
    lifecycle.listener().onDecision(RoutingRequest.builder().promptText("hi").model(model).build(),
        RoutingDecision.routed(RoutingReason.BEST_SCORE, fleet.replica(replicaId), new NoLease(
            replicaId)).build(), 0);
  }

  @Test
  void anIdleModelSleepsAndOneAtItsMinimumNeverDoes() {
    fleet.put("g0/a", ModelState.ACTIVE).put("g1/a", ModelState.ACTIVE)
        .put("g0/b", ModelState.ACTIVE);
    ModelLifecycle lifecycle = lifecycle(claim("a", 1, Duration.ofMinutes(1)),
        claim("b", 1, Duration.ofMinutes(1))).build();

    assertThat(round(lifecycle)).isEmpty();
    advance(Duration.ofSeconds(50));
    routed(lifecycle, "g1/a", "a");
    advance(Duration.ofSeconds(15));
    // g0/a idle 65 s: sleeps; g1/a was used 15 s ago; b is at its minimum of 1.
    assertThat(round(lifecycle)).containsExactly(
        new LifecycleAction(Kind.SLEEP, "g0/a", "a", Reason.IDLE, 1));
    assertThat(fleet.state("g0/a")).isEqualTo(ModelState.SLEEPING);

    advance(Duration.ofMinutes(10));
    for (int i = 0; i < 20; i++) {
      assertThat(round(lifecycle)).isEmpty();
      advance(Duration.ofMinutes(1));
    }
    assertThat(fleet.state("g1/a")).isEqualTo(ModelState.ACTIVE);
    assertThat(fleet.state("g0/b")).isEqualTo(ModelState.ACTIVE);
  }

  @Test
  void aModelBelowItsMinimumIsWoken() {
    fleet.put("g0/a", ModelState.SLEEPING).put("g1/a", ModelState.SLEEPING);
    ModelLifecycle lifecycle = lifecycle(claim("a", 2, Duration.ofMinutes(1))).build();

    assertThat(round(lifecycle)).extracting(LifecycleAction::kind, LifecycleAction::reason)
        .containsExactly(
            tuple(Kind.WAKE, Reason.MINIMUM),
            tuple(Kind.WAKE, Reason.MINIMUM));
    assertThat(fleet.awake("a")).isEqualTo(2);
  }

  @Test
  void aWakeGoesWhereItFits() {
    // g0 holds two awake models (full); g1 one (room for one more): c wakes on g1.
    fleet.put("g0/a", ModelState.ACTIVE).put("g0/b", ModelState.ACTIVE)
        .put("g0/c", ModelState.SLEEPING).put("g1/a", ModelState.ACTIVE)
        .put("g1/c", ModelState.SLEEPING);
    ModelLifecycle lifecycle = lifecycle(claim("a", 1, Duration.ofHours(1)),
        claim("b", 1, Duration.ofHours(1)), claim("c", 0, Duration.ofHours(1))).build();
    round(lifecycle);

    lifecycle.listener().onWakeRequested(fleet.replica("g0/c"), "c");
    assertThat(round(lifecycle)).containsExactly(
        new LifecycleAction(Kind.WAKE, "g1/c", "c", Reason.DEMAND, 0));
  }

  @Test
  void noRoomMeansTheLeastRecentlyUsedSleepsFirstThenTheWake() {
    // Both GPUs are full. On g0, b was used long ago; on g1, d was used a moment ago.
    fleet.put("g0/a", ModelState.ACTIVE).put("g0/b", ModelState.ACTIVE)
        .put("g0/c", ModelState.SLEEPING).put("g1/a", ModelState.ACTIVE)
        .put("g1/d", ModelState.ACTIVE).put("g1/c", ModelState.SLEEPING);
    ModelLifecycle lifecycle = lifecycle(claim("a", 1, Duration.ofHours(1)),
        claim("b", 0, Duration.ofHours(1)), claim("c", 0, Duration.ofHours(1)),
        claim("d", 0, Duration.ofHours(1))).build();
    round(lifecycle);
    advance(Duration.ofMinutes(5));
    routed(lifecycle, "g0/a", "a");
    routed(lifecycle, "g1/a", "a");
    routed(lifecycle, "g1/d", "d");
    advance(Duration.ofMinutes(1));
    fleet.holdAnswers();

    lifecycle.listener().onDecision(RoutingRequest.builder().promptText("hi").model("c").build(),
        RoutingDecision.modelWaking("g1/c", Duration.ofSeconds(1)), 0);
    // a has two copies but was used on both a minute ago; b's last copy idle 6 min: b goes.
    assertThat(round(lifecycle)).containsExactly(
        new LifecycleAction(Kind.SLEEP, "g0/b", "b", Reason.MAKE_ROOM, 1));
    advance(Duration.ofSeconds(1));
    // The sleep is not answered yet: its memory is not free, nothing more is done.
    assertThat(round(lifecycle)).isEmpty();
    fleet.releaseAnswers();
    assertThat(round(lifecycle)).containsExactly(
        new LifecycleAction(Kind.WAKE, "g0/c", "c", Reason.DEMAND, 0));
    assertThat(fleet.state("g0/c")).isEqualTo(ModelState.ACTIVE);
    assertThat(fleet.state("g1/d")).isEqualTo(ModelState.ACTIVE);
  }

  /** Claims a and b (minimum 1) and x (0); a minute on, the router asks x to wake on g0. */
  private ModelLifecycle askForXAfterAMinute() {
    ModelLifecycle lifecycle = lifecycle(claim("a", 1, Duration.ofHours(1)),
        claim("b", 1, Duration.ofHours(1)), claim("x", 0, Duration.ofHours(1))).build();
    round(lifecycle);
    advance(Duration.ofMinutes(1));
    lifecycle.listener().onWakeRequested(fleet.replica("g0/x"), "x");
    return lifecycle;
  }

  @Test
  void makingRoomAmongBusyCopiesSleepsTheModelLeftLeastLoaded() {
    // g0 is full with a and b, both serving now; a is busy on both its copies, b barely.
    fleet.put("g0/a", ModelState.ACTIVE, 6).put("g0/b", ModelState.ACTIVE, 1)
        .put("g0/x", ModelState.SLEEPING).put("g1/a", ModelState.ACTIVE, 6)
        .put("g2/b", ModelState.ACTIVE, 1);
    ModelLifecycle lifecycle = askForXAfterAMinute();
    assertThat(round(lifecycle)).containsExactly(
        new LifecycleAction(Kind.SLEEP, "g0/b", "b", Reason.MAKE_ROOM, 1));
    assertThat(round(lifecycle)).containsExactly(
        new LifecycleAction(Kind.WAKE, "g0/x", "x", Reason.DEMAND, 0));
  }

  @Test
  void aWakeThatNeedsRoomGoesWhereTheVictimDrainsSoonest() {
    // x may wake on g0 or g1, both full with a and b serving; a is the lighter model to take a
    // copy from (9 requests over 3 copies against b's 27), and its copy on g1 has fewer to finish.
    fleet.put("g0/a", ModelState.ACTIVE, 6).put("g0/b", ModelState.ACTIVE, 9)
        .put("g0/x", ModelState.SLEEPING).put("g1/a", ModelState.ACTIVE, 2)
        .put("g1/b", ModelState.ACTIVE, 9).put("g1/x", ModelState.SLEEPING)
        .put("g2/a", ModelState.ACTIVE, 1).put("g3/b", ModelState.ACTIVE, 9);
    ModelLifecycle lifecycle = askForXAfterAMinute();
    assertThat(round(lifecycle)).containsExactly(
        new LifecycleAction(Kind.SLEEP, "g1/a", "a", Reason.MAKE_ROOM, 1));
  }

  @Test
  void aPressureWakeTakesNoCopyWhoseModelWouldBeLeftBusier() {
    // a queues on its one copy; the only room on g1 is b's copy, and b (queued on one copy of
    // three, so not pressed) would be left with more per copy than a after its wake.
    fleet.put("g0/a", ModelState.ACTIVE, 3).put("g0/c", ModelState.ACTIVE)
        .put("g1/a", ModelState.SLEEPING).put("g1/b", ModelState.ACTIVE, 8)
        .put("g1/d", ModelState.ACTIVE).put("g2/b", ModelState.ACTIVE)
        .put("g3/b", ModelState.ACTIVE);
    ModelLifecycle lifecycle = lifecycle(claim("a", 1, Duration.ofHours(1)),
        claim("b", 1, Duration.ofHours(1)), claim("c", 1, Duration.ofHours(1)),
        claim("d", 1, Duration.ofHours(1))).build();
    for (int i = 0; i < 30; i++) {
      assertThat(round(lifecycle)).isEmpty();
      advance(Duration.ofSeconds(1));
    }
    assertThat(fleet.calls).isEmpty();
    // Once b's queue drains, a's pressure takes b's copy on g1.
    fleet.waiting.put("g1/b", 0);
    advance(Duration.ofSeconds(1));
    assertThat(round(lifecycle)).extracting(LifecycleAction::replicaId, LifecycleAction::reason)
        .containsExactly(tuple("g1/b", Reason.MAKE_ROOM));
    assertThat(round(lifecycle)).extracting(LifecycleAction::replicaId, LifecycleAction::reason)
        .containsExactly(tuple("g1/a", Reason.PRESSURE));
  }

  @Test
  void theRoomForOnePressureWakeGoesToTheModelMostLoadedPerCopy() {
    // a and b both queue on their one copy; g2 has room for one more copy. b, claimed after a,
    // has 9 waiting to a's 2: the wake is b's, and a's waits (w, y, z are at their minimum).
    fleet.put("g0/a", ModelState.ACTIVE, 2).put("g0/y", ModelState.ACTIVE)
        .put("g1/b", ModelState.ACTIVE, 9).put("g1/z", ModelState.ACTIVE)
        .put("g2/a", ModelState.SLEEPING).put("g2/b", ModelState.SLEEPING)
        .put("g2/w", ModelState.ACTIVE);
    ModelLifecycle lifecycle = lifecycle(claim("a", 1, Duration.ofHours(1)),
        claim("b", 1, Duration.ofHours(1)), claim("w", 1, Duration.ofHours(1)),
        claim("y", 1, Duration.ofHours(1)), claim("z", 1, Duration.ofHours(1))).build();
    assertThat(round(lifecycle)).isEmpty();
    advance(ModelLifecycle.DEFAULT_PRESSURE_DELAY);
    assertThat(round(lifecycle)).extracting(LifecycleAction::replicaId, LifecycleAction::reason)
        .containsExactly(tuple("g2/b", Reason.PRESSURE));
  }

  @Test
  void aPressureWakeNeverTakesAModelsLastCopy() {
    fleet.put("g0/a", ModelState.ACTIVE, 5).put("g0/b", ModelState.ACTIVE)
        .put("g0/x", ModelState.SLEEPING).put("g1/a", ModelState.SLEEPING)
        .put("g1/c", ModelState.ACTIVE).put("g1/e", ModelState.ACTIVE);
    ModelLifecycle lifecycle = lifecycle(claim("a", 1, Duration.ofHours(1)),
        claim("b", 0, Duration.ofHours(1)), claim("c", 0, Duration.ofHours(1)),
        claim("e", 0, Duration.ofHours(1)), claim("x", 0, Duration.ofHours(1))).build();
    for (int i = 0; i < 30; i++) {
      assertThat(round(lifecycle)).isEmpty();
      advance(Duration.ofSeconds(1));
    }
    assertThat(fleet.calls).isEmpty();
  }

  @Test
  void sustainedQueueingWakesOneMoreCopyAfterTheDelayThenWaits() {
    fleet.put("g0/a", ModelState.ACTIVE, 3).put("g1/a", ModelState.SLEEPING)
        .put("g2/a", ModelState.SLEEPING);
    ModelLifecycle lifecycle = lifecycle(claim("a", 1, Duration.ofHours(1))).build();
    assertThat(round(lifecycle)).isEmpty();
    advance(Duration.ofSeconds(4));
    assertThat(round(lifecycle)).isEmpty();
    advance(Duration.ofSeconds(1));
    assertThat(round(lifecycle)).extracting(LifecycleAction::reason)
        .containsExactly(Reason.PRESSURE);
    // The new copy takes its share: the queue stays on one of two, which is half: another wake
    // only after the delay again.
    advance(Duration.ofSeconds(1));
    assertThat(round(lifecycle)).isEmpty();
  }

  @Test
  void aFailedActionIsRetriedWithBackoffAndNotRepeatedOnceItTookEffect() {
    fleet.put("g0/a", ModelState.SLEEPING);
    ModelLifecycle lifecycle = lifecycle(claim("a", 1, Duration.ofHours(1)))
        .retryBackoff(Duration.ofSeconds(2), Duration.ofSeconds(8)).build();
    fleet.failNext(2);

    assertThat(round(lifecycle)).hasSize(1);
    advance(Duration.ofSeconds(1));
    assertThat(round(lifecycle)).isEmpty(); // backing off 2 s
    advance(Duration.ofSeconds(1));
    assertThat(round(lifecycle)).hasSize(1); // second failure: 4 s
    advance(Duration.ofSeconds(3));
    assertThat(round(lifecycle)).isEmpty();
    advance(Duration.ofSeconds(1));
    fleet.staleView = true; // took effect, but the view will not show it for a while
    assertThat(round(lifecycle)).hasSize(1);
    for (int i = 0; i < 20; i++) {
      advance(Duration.ofSeconds(1));
      assertThat(round(lifecycle)).isEmpty();
    }
    assertThat(fleet.calls).hasSize(3);
    LifecycleState state = lifecycle.state();
    assertThat(state.actionsFailed()).isEqualTo(2);
    assertThat(state.actionsDone()).isEqualTo(1);
    assertThat(state.models().get(0).awake()).isEqualTo(1);
  }

  @Test
  void anActionTheEngineCannotDoIsNotRetried() {
    fleet.put("g0/a", ModelState.SLEEPING);
    fleet.unsupported = true;
    ModelLifecycle lifecycle = lifecycle(claim("a", 1, Duration.ofHours(1))).build();
    assertThat(round(lifecycle)).hasSize(1);
    for (int i = 0; i < 10; i++) {
      advance(Duration.ofMinutes(1));
      assertThat(round(lifecycle)).isEmpty();
    }
    assertThat(lifecycle.state().actionsUnsupported()).isEqualTo(1);
  }

  @Test
  void anUnansweredActionTimesOutAndItsLateAnswerCountsOnlyIfItTookEffect() {
    fleet.put("g0/a", ModelState.SLEEPING);
    ModelLifecycle lifecycle = lifecycle(claim("a", 1, Duration.ofHours(1)))
        .actionTimeout(Duration.ofSeconds(30)).build();
    fleet.holdAnswers();
    assertThat(round(lifecycle)).hasSize(1);
    advance(Duration.ofSeconds(29));
    assertThat(round(lifecycle)).isEmpty();
    assertThat(lifecycle.state().inFlight()).hasSize(1);
    advance(Duration.ofSeconds(1));
    assertThat(round(lifecycle)).isEmpty(); // timed out: failed, backing off
    assertThat(lifecycle.state().actionsFailed()).isEqualTo(1);
    fleet.staleView = true;
    fleet.releaseAnswers(); // the late answer: it did wake
    advance(Duration.ofSeconds(5));
    assertThat(round(lifecycle)).isEmpty();
    assertThat(fleet.calls).hasSize(1);
  }

  @Test
  void trafficHoveringAtTheIdleThresholdDoesNotFlap() {
    fleet.put("g0/a", ModelState.ACTIVE).put("g1/a", ModelState.ACTIVE);
    ModelLifecycle lifecycle = lifecycle(claim("a", 1, Duration.ofSeconds(60))).build();
    round(lifecycle);
    // One request every 59 s to g1/a, g0/a never: g0/a sleeps once, g1/a never.
    for (int t = 0; t < 3600; t++) {
      if (t % 59 == 0) {
        routed(lifecycle, "g1/a", "a");
      }
      round(lifecycle);
      advance(Duration.ofSeconds(1));
    }
    assertThat(fleet.calls).containsExactly("sleep g0/a 1");
  }

  @Test
  void queueingThatComesAndGoesWithinThePressureDelayWakesNothing() {
    fleet.put("g0/a", ModelState.ACTIVE).put("g1/a", ModelState.SLEEPING);
    ModelLifecycle lifecycle = lifecycle(claim("a", 1, Duration.ofHours(1))).build();
    for (int t = 0; t < 600; t++) {
      fleet.waiting.put("g0/a", t % 5 == 4 ? 0 : 2); // queued 4 s of every 5
      assertThat(round(lifecycle)).isEmpty();
      advance(Duration.ofSeconds(1));
    }
    fleet.waiting.put("g0/a", 2);
    for (int t = 0; t < 5; t++) {
      assertThat(round(lifecycle)).isEmpty();
      advance(Duration.ofSeconds(1));
    }
    assertThat(round(lifecycle)).extracting(LifecycleAction::reason)
        .containsExactly(Reason.PRESSURE);
  }

  @Test
  void demandHoveringAroundAWakeDoesNotFlap() {
    // Requests arrive every 2 minutes for a model whose idle time is 1 minute: it sleeps once idle,
    // wakes on the next request, and the cooldown keeps each wake up for at least 30 s.
    fleet.put("g0/a", ModelState.SLEEPING);
    ModelLifecycle lifecycle = lifecycle(claim("a", 0, Duration.ofMinutes(1))).build();
    for (int t = 0; t < 1200; t++) {
      if (t % 120 == 0) {
        if (fleet.state("g0/a") == ModelState.SLEEPING) {
          lifecycle.listener().onDecision(RoutingRequest.builder().promptText("x").model("a").build(),
              RoutingDecision.modelWaking("g0/a", Duration.ofSeconds(1)), 0);
        } else {
          routed(lifecycle, "g0/a", "a");
        }
      }
      round(lifecycle);
      advance(Duration.ofSeconds(1));
    }
    // One wake per request that found it asleep, one sleep per idle minute after: 10 of each.
    assertThat(fleet.calls).hasSize(20);
    for (int i = 0; i < fleet.calls.size(); i++) {
      assertThat(fleet.calls.get(i)).isEqualTo(i % 2 == 0 ? "wake g0/a" : "sleep g0/a 1");
    }
  }

  @Test
  void onlyTheLeaseHolderActs() {
    fleet.put("g0/a", ModelState.SLEEPING);
    LifecycleLease other = new ScriptedLease(OptionalLong.empty(), false);
    ModelLifecycle follower = lifecycle(claim("a", 1, Duration.ofHours(1))).lease(other).build();
    assertThat(round(follower)).isEmpty();
    assertThat(follower.state().leader()).isFalse();
    assertThat(fleet.calls).isEmpty();
  }

  @Test
  void aHolderWhoseTokenIsNoLongerCurrentDoesNotAct() {
    fleet.put("g0/a", ModelState.SLEEPING);
    LifecycleLease takenOver = new ScriptedLease(OptionalLong.of(7), false);
    ModelLifecycle stale = lifecycle(claim("a", 1, Duration.ofHours(1))).lease(takenOver).build();
    assertThat(round(stale)).isEmpty();
    assertThat(fleet.calls).isEmpty();
  }

  @Test
  void aLeaseStoreThatFailsMeansNotActingAndNoException() {
    fleet.put("g0/a", ModelState.SLEEPING);
    LifecycleLease down = new LifecycleLease() {
      @Override
      public CompletionStage<OptionalLong> acquire(String holder, Duration ttl) {
        return CompletableFuture.failedFuture(new IllegalStateException("store down"));
      }

      @Override
      public CompletionStage<Boolean> isCurrent(String holder, long token) {
        throw new AssertionError("not asked without a holding");
      }

      @Override
      public CompletionStage<Void> release(String holder, long token) {
        return CompletableFuture.completedFuture(null);
      }
    };
    ModelLifecycle lifecycle = lifecycle(claim("a", 1, Duration.ofHours(1))).lease(down).build();
    assertThat(round(lifecycle)).isEmpty();
    assertThat(lifecycle.state().leader()).isFalse();
  }

  @Test
  void badConfigurationIsRefusedAtTheBoundary() {
    assertThatThrownBy(() -> ModelClaim.builder("a").build())
        .hasMessage("gpuMemoryBytes: not set (expected: > 0)");
    assertThatThrownBy(() -> ModelClaim.builder("a").gpuMemoryBytes(1).minAwake(3).maxAwake(2)
        .build()).hasMessage("minAwake: 3 (expected: <= maxAwake 2)");
    assertThatThrownBy(() -> ModelClaim.builder("a").sleepLevel(3))
        .hasMessage("sleepLevel: 3 (expected: 1 or 2)");
    assertThatThrownBy(() -> ModelClaim.builder(" ")).hasMessageContaining("model: blank");
    ModelClaim a = claim("a", 0, Duration.ofMinutes(1));
    assertThatThrownBy(() -> ModelLifecycle.builder().claim(a).claim(a))
        .hasMessage("claim: a claimed twice (expected: one claim per model)");
    assertThatThrownBy(() -> ModelLifecycle.builder().claim(a).build())
        .hasMessage("fleet: not set (expected: a fleet view or a supplier)");
    assertThatThrownBy(() -> ModelLifecycle.builder().claim(a).fleet(fleet::replicas).build())
        .hasMessageStartingWith("actuator: not set");
    assertThatThrownBy(() -> ModelLifecycle.builder().claim(a).fleet(fleet::replicas)
        .actuator(fleet).build()).hasMessage("gpuMemoryBytes: not set (expected: > 0)");
    assertThatThrownBy(() -> ModelLifecycle.builder().build())
        .hasMessage("claims: none (expected: at least one claim)");
    assertThatThrownBy(() -> ModelLifecycle.builder().retryBackoff(Duration.ofSeconds(2),
        Duration.ofSeconds(1))).hasMessage("maxBackoff: PT1S (expected: >= initialBackoff PT2S)");
  }

  /** Replicas {@code gpu/model}, one model each; the actuator answers by flipping their state. */
  private static final class Fleet implements ModelActuator {
    final Map<String, ModelState> states = new LinkedHashMap<>();
    final Map<String, Integer> waiting = new ConcurrentHashMap<>();
    final List<String> calls = new ArrayList<>();
    final List<Runnable> held = new ArrayList<>();
    boolean hold;
    boolean staleView;
    boolean unsupported;
    int failures;

    Fleet put(String id, ModelState state) {
      return put(id, state, 0);
    }

    Fleet put(String id, ModelState state, int waitingRequests) {
      states.put(id, state);
      waiting.put(id, waitingRequests);
      return this;
    }

    ModelState state(String id) {
      return states.get(id);
    }

    int awake(String model) {
      return (int) states.entrySet().stream()
          .filter(e -> e.getKey().endsWith("/" + model) && e.getValue() == ModelState.ACTIVE)
          .count();
    }

    Replica replica(String id) {
      return Replica.builder(id).model(id.substring(id.indexOf('/') + 1), states.get(id))
          .load(ReplicaLoad.builder().waitingRequests(waiting.get(id)).build()).build();
    }

    List<Replica> replicas() {
      List<Replica> out = new ArrayList<>();
      for (String id : states.keySet()) {
        out.add(replica(id));
      }
      return out;
    }

    void failNext(int n) {
      failures = n;
    }

    void holdAnswers() {
      hold = true;
    }

    void releaseAnswers() {
      hold = false;
      List<Runnable> answers = new ArrayList<>(held);
      held.clear();
      answers.forEach(Runnable::run);
    }

    @Override
    public CompletionStage<Outcome> sleep(String replicaId, String model, int level) {
      calls.add("sleep " + replicaId + " " + level);
      return answer(replicaId, ModelState.SLEEPING);
    }

    @Override
    public CompletionStage<Outcome> wake(String replicaId, String model) {
      calls.add("wake " + replicaId);
      return answer(replicaId, ModelState.ACTIVE);
    }

    private CompletionStage<Outcome> answer(String replicaId, ModelState to) {
      if (unsupported) {
        return CompletableFuture.completedFuture(Outcome.UNSUPPORTED);
      }
      if (failures > 0) {
        failures--;
        return CompletableFuture.completedFuture(Outcome.FAILED);
      }
      CompletableFuture<Outcome> answer = new CompletableFuture<>();
      Runnable done = () -> {
        if (!staleView) {
          states.put(replicaId, to);
        }
        answer.complete(Outcome.DONE);
      };
      if (hold) {
        held.add(done);
      } else {
        done.run();
      }
      return answer;
    }
  }

  private record NoLease(String replicaId) implements RequestLease {
    @Override
    public void markFirstToken() {}

    @Override
    public void complete(int outputTokens) {}

    @Override
    public void close() {}

    @Override
    public boolean isClosed() {
      return false;
    }
  }

  /** A lease that always answers the same: whether it is held, and whether the token is current. */
  private record ScriptedLease(OptionalLong held, boolean current) implements LifecycleLease {
    @Override
    public CompletionStage<OptionalLong> acquire(String holder, Duration ttl) {
      return CompletableFuture.completedFuture(held);
    }

    @Override
    public CompletionStage<Boolean> isCurrent(String holder, long token) {
      return CompletableFuture.completedFuture(current);
    }

    @Override
    public CompletionStage<Void> release(String holder, long token) {
      return CompletableFuture.completedFuture(null);
    }
  }
}
