package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.RepinCause;
import io.affinityrouter.Replica;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.spi.Binding;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The pin stage alone, on hand-built selections over the in-memory store: replica 0 is where the
 * session may be bound, replica 1 the admitted candidate.
 */
class PinningTest {
  private static final int PROMPT = 8_192;
  private final List<Replica> replicas = List.of(Replica.of("bound"), Replica.of("candidate"));
  private final InMemoryBindingStore store = InMemoryBindingStore.builder().build();

  @Test
  void aNewSessionIsClaimedForTheCandidate() {
    Stages stages = new Stages();
    Selection sel = admittedCandidate(stages, "new");
    RoutingDecision d = stages.pinning(store, false).run(sel).join();
    assertThat(d.reason()).isEqualTo(RoutingReason.SESSION_CLAIMED);
    assertThat(d.replica().id()).isEqualTo("candidate");
    assertThat(binding("new").replicaId()).isEqualTo("candidate");
    assertThat(sel.reservations.held()).isZero();
    assertThat(stages.tracker.state("candidate").inFlightRequests()).isEqualTo(1);
    d.lease().close();
    assertThat(stages.tracker.state("candidate").inFlightRequests()).isZero();
  }

  @Test
  void aBoundReplicaThatKeepsTheSessionTakesTheRequestAndTheCandidateIsFreed() {
    Stages stages = new Stages();
    claim("s", "bound");
    Selection sel = admittedCandidate(stages, "s");
    stages.matched(sel, 0, PROMPT / 16);
    RoutingDecision d = stages.pinning(store, false).run(sel).join();
    assertThat(d.reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
    assertThat(d.replica().id()).isEqualTo("bound");
    assertThat(stages.tracker.state("bound").inFlightRequests()).isEqualTo(1);
    assertThat(stages.tracker.state("candidate").inFlightRequests()).isZero();
    assertThat(sel.reservations.held()).isZero();
  }

  @Test
  void anUnhealthyBoundReplicaLosesTheSessionByAFencedRepin() {
    Stages stages = new Stages();
    long before = claim("s", "bound").generation();
    Selection sel = admittedCandidate(stages, "s");
    sel.status[0] = Selection.UNHEALTHY;
    RoutingDecision d = stages.pinning(store, false).run(sel).join();
    assertThat(d.reason()).isEqualTo(RoutingReason.SESSION_REPINNED);
    assertThat(d.repinCause()).contains(RepinCause.REPLICA_UNHEALTHY);
    assertThat(d.previousReplicaId()).contains("bound");
    assertThat(d.replica().id()).isEqualTo("candidate");
    Binding now = binding("s");
    assertThat(now.replicaId()).isEqualTo("candidate");
    assertThat(now.generation()).isGreaterThan(before);
    assertThat(d.bindingGeneration()).isEqualTo(now.generation());
  }

  @Test
  void aReturningTurnWhoseReplicaIsFullIsRefusedOrHeldNeverMoved() {
    for (boolean holding : new boolean[] {false, true}) {
      Stages stages = new Stages(1, 0);
      String session = "full-" + holding;
      long generation = claim(session, "bound").generation();
      Selection sel = admittedCandidate(stages, session);
      stages.matched(sel, 0, PROMPT / 16);
      stages.tracker.state("bound").tryAcquire(1, Long.MAX_VALUE, 1); // its only slot is taken
      RoutingDecision d = stages.pinning(store, holding).run(sel).join();
      if (holding) {
        assertThat(d).isSameAs(DefaultRouter.HELD);
      } else {
        assertThat(d.reason()).isEqualTo(RoutingReason.ALL_AT_LIMIT);
      }
      assertThat(binding(session).replicaId()).isEqualTo("bound");
      assertThat(binding(session).generation()).isEqualTo(generation);
      assertThat(stages.tracker.state("candidate").inFlightRequests()).isZero();
      assertThat(sel.reservations.held()).isZero();
    }
  }

  @Test
  void aBoundReplicaGoneFromTheListIsReplacedByTheCandidate() {
    Stages stages = new Stages();
    claim("s", "elsewhere");
    Selection sel = admittedCandidate(stages, "s");
    RoutingDecision d = stages.pinning(store, false).run(sel).join();
    assertThat(d.repinCause()).contains(RepinCause.REPLICA_GONE);
    assertThat(d.previousReplicaId()).contains("elsewhere");
    assertThat(binding("s").replicaId()).isEqualTo("candidate");
  }

  @Test
  void aDrainingBoundReplicaStillKeepsItsSession() {
    Stages stages = new Stages();
    claim("s", "bound");
    Selection sel = admittedCandidate(stages, "s");
    sel.status[0] = Selection.DRAINING;
    stages.matched(sel, 0, PROMPT / 16);
    RoutingDecision d = stages.pinning(store, false).run(sel).join();
    assertThat(d.reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
    assertThat(d.replica().id()).isEqualTo("bound");
    assertThat(stages.tracker.state("candidate").inFlightRequests()).isZero();
  }

  private Selection admittedCandidate(Stages stages, String session) {
    Selection sel = stages.selection(replicas, PROMPT, session);
    sel.candidate = 1;
    assertThat(stages.limits.admit(sel, 1)).isTrue();
    return sel;
  }

  private Binding claim(String session, String replica) {
    return store.getOrClaim(new io.affinityrouter.spi.BindingKey(Stages.MODEL, "", session),
        replica, Duration.ofHours(1)).toCompletableFuture().join();
  }

  private Binding binding(String session) {
    return store.get(new io.affinityrouter.spi.BindingKey(Stages.MODEL, "", session))
        .toCompletableFuture().join().orElseThrow();
  }
}
