package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.Replica;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReservationsTest {
  private final Stages stages = new Stages(1, 0);
  private final List<Replica> replicas = List.of(Replica.of("a"), Replica.of("b"), Replica.of("c"));

  @Test
  void eachReservationEndsOnceReleasedOrHandedOff() {
    Selection sel = stages.selection(replicas, 64, null);
    Reservations r = sel.reservations;
    assertThat(stages.limits.admit(sel, 0)).isTrue();
    assertThat(stages.limits.admit(sel, 1)).isTrue();
    assertThat(r.held()).isEqualTo(2);
    assertThat(sel.states[0].inFlightRequests()).isEqualTo(1);

    r.release(sel, 0);
    assertThat(sel.states[0].inFlightRequests()).isZero();
    assertThat(sel.states[0].inFlightTokens()).isZero();
    assertThatThrownBy(() -> r.release(sel, 0)).isInstanceOf(IllegalStateException.class)
        .hasMessage("replica 0: released without a reservation");

    r.handOff(1);
    assertThat(sel.states[1].inFlightRequests()).isEqualTo(1); // the lease's now
    assertThatThrownBy(() -> r.handOff(1)).isInstanceOf(IllegalStateException.class)
        .hasMessage("replica 1: handed to a lease without a reservation");
    assertThatThrownBy(() -> r.release(sel, 1)).isInstanceOf(IllegalStateException.class);
    assertThat(r.held()).isZero();
  }

  @Test
  void aReplicaIsReservedOnceAndAtMostTwoAtATime() {
    Selection sel = stages.selection(replicas, 64, null);
    assertThat(stages.limits.admit(sel, 0)).isTrue();
    assertThatThrownBy(() -> stages.limits.admit(sel, 0)).isInstanceOf(IllegalStateException.class)
        .hasMessage("replica 0: reserved twice");
    assertThat(stages.limits.admit(sel, 1)).isTrue();
    assertThatThrownBy(() -> stages.limits.admit(sel, 2)).isInstanceOf(IllegalStateException.class)
        .hasMessageStartingWith("replica 2: a third reservation");
    assertThat(sel.states[2].inFlightRequests()).isZero();
  }

  @Test
  void aReplicaAtItsLimitReservesNothing() {
    Selection sel = stages.selection(replicas, 64, null);
    assertThat(stages.limits.admit(sel, 0)).isTrue();
    sel.reservations.handOff(0); // one request in flight: the limit of 1
    assertThat(stages.limits.admit(sel, 0)).isFalse();
    assertThat(sel.reservations.held()).isZero();
    assertThat(sel.states[0].inFlightRequests()).isEqualTo(1);
  }

  @Test
  void aDecisionThatEndsHoldingCapacityGivesItBack() {
    Selection sel = stages.selection(replicas, 64, null);
    assertThat(stages.limits.admit(sel, 0)).isTrue();
    assertThat(stages.limits.admit(sel, 2)).isTrue();
    sel.decided(RoutingDecision.notRouted(RoutingReason.NO_REPLICA, Duration.ZERO));
    assertThat(sel.reservations.held()).isZero();
    assertThat(sel.states[0].inFlightRequests()).isZero();
    assertThat(sel.states[2].inFlightRequests()).isZero();
  }

  @Test
  void aDetachedSelectionTakesTheReservationsOver() {
    Selection sel = stages.selection(replicas, 64, null);
    assertThat(stages.limits.admit(sel, 1)).isTrue();
    Selection moved = sel.detached();
    assertThat(sel.reservations.held()).isZero();
    assertThat(moved.reservations.holds(1)).isTrue();
    sel.decided(RoutingDecision.notRouted(RoutingReason.NO_REPLICA, Duration.ZERO));
    assertThat(moved.states[1].inFlightRequests()).isEqualTo(1); // the original let nothing go
    moved.reservations.release(moved, 1);
    assertThat(moved.states[1].inFlightRequests()).isZero();
  }
}
