package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.RepinCause;
import io.affinityrouter.Replica;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The keep rule alone, on hand-built selections: replica 0 is bound, replica 1 the candidate. */
class RepinPolicyTest {
  private static final int PROMPT = 8_192;
  private final List<Replica> replicas = List.of(Replica.of("bound"), Replica.of("candidate"));

  @Test
  void aBoundReplicaThatCannotServeGivesItsCause() {
    Stages stages = new Stages();
    RepinPolicy policy = stages.repinPolicy();
    Selection sel = stages.selection(replicas, PROMPT, "s");
    sel.candidate = 1;
    assertThat(policy.keep(sel, -1)).isEqualTo(RepinCause.REPLICA_GONE);
    byte[] statuses = {Selection.UNHEALTHY, Selection.FILTERED, Selection.NO_MODEL,
        Selection.ASLEEP, Selection.LOADING, Selection.AT_LIMIT};
    RepinCause[] causes = {RepinCause.REPLICA_UNHEALTHY, RepinCause.REPLICA_FILTERED,
        RepinCause.MODEL_UNAVAILABLE, RepinCause.MODEL_UNAVAILABLE, RepinCause.MODEL_UNAVAILABLE,
        RepinCause.REPLICA_AT_LIMIT};
    for (int k = 0; k < statuses.length; k++) {
      sel.status[0] = statuses[k];
      assertThat(policy.keep(sel, 0)).as("status %d", statuses[k]).isEqualTo(causes[k]);
    }
    assertThat(sel.reservations.held()).isZero();
  }

  @Test
  void aHealthyBoundReplicaKeepsTheSessionAndIsReserved() {
    Stages stages = new Stages();
    Selection sel = stages.selection(replicas, PROMPT, "s");
    sel.candidate = 1;
    stages.matched(sel, 0, PROMPT / 16);
    assertThat(stages.repinPolicy().keep(sel, 0)).isNull();
    assertThat(sel.reservations.holds(0)).isTrue();
    assertThat(sel.states[0].inFlightRequests()).isEqualTo(1);
  }

  @Test
  void anOverloadedBoundReplicaLosesTheSessionOnlyToAnIdleCandidate() {
    Stages stages = new Stages();
    RepinPolicy policy = stages.repinPolicy();
    Selection sel = stages.selection(replicas, PROMPT, "s");
    sel.candidate = 1;
    stages.matched(sel, 0, 16); // 256 of 8,192 tokens cached: it saves little
    double saved = sel.prefill[1] - sel.prefill[0];
    Stages.queue(sel, 0, RepinPolicy.SLACK_SECONDS + RepinPolicy.SAVINGS_MULTIPLE * saved + 5);
    assertThat(policy.keep(sel, 0)).isEqualTo(RepinCause.REPLICA_OVERLOADED);
    assertThat(sel.reservations.held()).isZero();

    // Every replica queues: moving would add the recompute to another queue.
    Stages.queue(sel, 1, RepinPolicy.SLACK_SECONDS * 2);
    assertThat(policy.keep(sel, 0)).isNull();
    assertThat(sel.reservations.holds(0)).isTrue();
  }

  @Test
  void aLargeCacheHoldsTheSessionThroughAQueueItsSavingsOutweigh() {
    Stages stages = new Stages();
    Selection sel = stages.selection(replicas, PROMPT, "s");
    sel.candidate = 1;
    stages.matched(sel, 0, PROMPT / 16);
    double saved = sel.prefill[1] - sel.prefill[0];
    assertThat(saved).isPositive();
    Stages.queue(sel, 0, RepinPolicy.SAVINGS_MULTIPLE * saved * 0.9);
    assertThat(stages.repinPolicy().keep(sel, 0)).isNull();
    sel.reservations.release(sel, 0);
    // Its cost over the candidate's is its queue less the saving.
    Stages.queue(sel, 0,
        RepinPolicy.SLACK_SECONDS + (RepinPolicy.SAVINGS_MULTIPLE + 1) * saved * 1.1);
    assertThat(stages.repinPolicy().keep(sel, 0)).isEqualTo(RepinCause.REPLICA_OVERLOADED);
  }

  @Test
  void withinTheAffinityBudgetTheSessionStaysWhateverItsCacheSaves() {
    Stages stages = new Stages(Integer.MAX_VALUE, AffinityBudget.QUANTILE);
    for (int i = 0; i < AffinityBudget.WARM_UP * 2; i++) {
      stages.budget.record(30.0); // a fleet whose best prefill is 30 s: anything under it is fine
    }
    Selection sel = stages.selection(replicas, PROMPT, "s");
    sel.candidate = 1;
    Stages.queue(sel, 0, 10);
    assertThat(stages.repinPolicy().keep(sel, 0)).isNull();
  }

  @Test
  void aBoundReplicaThatFillsUpMeanwhileIsAtItsLimit() {
    Stages stages = new Stages(1, 0);
    Selection sel = stages.selection(replicas, PROMPT, "s");
    sel.candidate = 1;
    assertThat(stages.limits.admit(sel, 0)).isTrue();
    sel.reservations.handOff(0); // another request took the only slot
    assertThat(stages.repinPolicy().keep(sel, 0)).isEqualTo(RepinCause.REPLICA_AT_LIMIT);
    assertThat(sel.reservations.held()).isZero();
  }
}
