package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The pick stage alone, on hand-built selections (top-1, so the cheapest allowed replica wins). */
class PickTest {
  private static final int PROMPT = 4_096;
  private final List<Replica> replicas =
      List.of(Replica.of("r0"), Replica.of("r1"), Replica.of("r2"));

  @Test
  void theCheapestAllowedReplicaIsPickedAndReserved() {
    Stages stages = new Stages();
    Selection sel = stages.selection(replicas, PROMPT, null);
    Stages.queue(sel, 0, 2);
    Stages.queue(sel, 1, 0.5);
    Stages.queue(sel, 2, 1);
    assertThat(stages.pick().run(sel, stages.scratch)).isEqualTo(1);
    assertThat(sel.reservations.holds(1)).isTrue();
    assertThat(sel.reservations.held()).isEqualTo(1);
  }

  @Test
  void aReplicaThatIsNotOkIsNeverPicked() {
    Stages stages = new Stages();
    Selection sel = stages.selection(replicas, PROMPT, null);
    Stages.queue(sel, 0, 2);
    Stages.queue(sel, 2, 3);
    sel.status[1] = Selection.DRAINING; // cheapest, but takes no new work
    assertThat(stages.pick().run(sel, stages.scratch)).isEqualTo(0);
    sel.reservations.release(sel, 0);
    sel.status[0] = Selection.UNHEALTHY;
    sel.status[2] = Selection.ASLEEP;
    assertThat(stages.pick().run(sel, stages.scratch)).isEqualTo(-1);
    assertThat(sel.reservations.held()).isZero();
  }

  @Test
  void aReplicaFoundAtItsLimitIsMarkedSoAndTheNextIsTried() {
    Stages stages = new Stages(1, 0);
    Selection sel = stages.selection(replicas, PROMPT, null);
    Stages.queue(sel, 0, 1);
    Stages.queue(sel, 2, 2);
    assertThat(stages.limits.admit(sel, 1)).isTrue();
    sel.reservations.handOff(1); // r1, the cheapest, is full
    assertThat(stages.pick().run(sel, stages.scratch)).isEqualTo(0);
    assertThat(sel.status[1]).isEqualTo(Selection.AT_LIMIT);
    assertThat(sel.reservations.holds(1)).isFalse();
    assertThat(sel.states[1].inFlightRequests()).isEqualTo(1);
  }

  @Test
  void theReplicaHoldingThePromptWinsWithinTheBudgetWhenItsQueueIsWorthTheSaving() {
    Stages stages = new Stages(Integer.MAX_VALUE, AffinityBudget.QUANTILE);
    for (int i = 0; i < AffinityBudget.WARM_UP * 2; i++) {
      stages.budget.record(5.0);
    }
    Selection sel = stages.selection(replicas, PROMPT, null);
    stages.matched(sel, 2, PROMPT / 16);
    double saved = sel.prefill[0] - sel.prefill[2];
    Stages.queue(sel, 2, Pick.HOLDER_SAVINGS_MULTIPLE * saved * 0.9);
    assertThat(sel.cost[2]).isGreaterThan(sel.cost[0]); // not the cheapest
    assertThat(stages.pick().run(sel, stages.scratch)).isEqualTo(2);
    sel.reservations.release(sel, 2);

    Stages.queue(sel, 2, Pick.HOLDER_SAVINGS_MULTIPLE * saved * 1.5);
    assertThat(stages.pick().run(sel, stages.scratch)).isNotEqualTo(2);
  }
}
