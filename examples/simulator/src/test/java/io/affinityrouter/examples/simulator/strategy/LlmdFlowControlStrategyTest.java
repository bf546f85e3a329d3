package io.affinityrouter.examples.simulator.strategy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.List;
import org.junit.jupiter.api.Test;

class LlmdFlowControlStrategyTest {
  private static final long MS = 1_000_000L;
  private long nextId;

  private SimRequest prompt(int tokens) {
    ++nextId;
    return new SimRequest(nextId, null, 0, new long[] {nextId}, new int[] {tokens}, 10, -1);
  }

  /** Waiting 0, 5, 10, 0 and KV usage 0.4, 0.8, 0.2, 0: (0.5 + 1 + 2 + 0) / 4 = 0.875. */
  private static FakeFleet belowSaturation() {
    return new FakeFleet(4).waiting(1, 5).waiting(2, 10)
        .kvUsage(0, 0.4).kvUsage(1, 0.8).kvUsage(2, 0.2).kvUsage(3, 0);
  }

  @Test
  void saturationIsTheMeanOfEachEndpointsTighterRatio() {
    FakeFleet fleet = belowSaturation();
    assertThat(LlmdFlowControlStrategy.saturation(fleet.replicas(), 0))
        .isCloseTo(0.875, within(1e-12));
    // replica 3 at 2 waiting (0.4) and 50% KV (0.625): (3.5 + 0.625) / 4
    fleet.waiting(3, 2).kvUsage(3, 0.5);
    assertThat(LlmdFlowControlStrategy.saturation(fleet.replicas(), 0))
        .isCloseTo(1.03125, within(1e-12));
  }

  @Test
  void staleMetricsOrNoEndpointCountAsSaturated() {
    FakeFleet idle = new FakeFleet(3);
    assertThat(LlmdFlowControlStrategy.saturation(idle.replicas(), 200 * MS)).isZero();
    assertThat(LlmdFlowControlStrategy.saturation(idle.replicas(), 200 * MS + 1)).isEqualTo(1.0);
    assertThat(LlmdFlowControlStrategy.saturation(List.of(), 0)).isEqualTo(1.0);
    assertThatThrownBy(() -> LlmdFlowControlStrategy.saturation(idle.replicas(), -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("metricsAgeNanos: -1 (expected: >= 0)");
  }

  @Test
  void belowSaturationTheScorersPick() {
    LlmdFlowControlStrategy s = new LlmdFlowControlStrategy(1);
    Route r = s.route(prompt(640), belowSaturation());
    // 2·queue + 2·(1 − kv), no prefix yet: 3.2, 1.4, 1.6 and 4 for replica 3
    assertThat(r.held()).isFalse();
    assertThat(r.replicaIndex()).isEqualTo(3);
    assertThat(s.queued()).isZero();
  }

  @Test
  void atSaturationOneTheRequestIsHeldUntilThePoolDropsBelow() {
    LlmdFlowControlStrategy s = new LlmdFlowControlStrategy(1);
    // replica 3 at 40% KV: (0.5 + 1 + 2 + 0.5) / 4 is exactly 1
    FakeFleet fleet = belowSaturation().kvUsage(3, 0.4);
    assertThat(LlmdFlowControlStrategy.saturation(fleet.replicas(), 0)).isEqualTo(1.0);
    SimRequest first = prompt(640);
    SimRequest second = prompt(640);
    assertThat(s.route(first, fleet)).isSameAs(Route.HOLD);
    assertThat(s.route(second, fleet.now(50 * MS))).isSameAs(Route.HOLD);
    assertThat(s.queued()).isEqualTo(2);
    fleet.now(100 * MS).kvUsage(3, 0.32); // 0.4 for replica 3: 0.975
    Route r = s.route(first, fleet);
    assertThat(r.held()).isFalse();
    assertThat(r.replicaIndex()).isBetween(0, 3);
    assertThat(s.queued()).isEqualTo(1);
  }

  @Test
  void queuedRequestsLeaveAtOneATickOnceThePoolIsBelowSaturation() {
    LlmdFlowControlStrategy s = new LlmdFlowControlStrategy(1);
    FakeFleet fleet = new FakeFleet(2).waiting(0, 5).waiting(1, 5);
    List<SimRequest> held = List.of(prompt(64), prompt(64), prompt(64), prompt(64), prompt(64));
    for (SimRequest r : held) {
      assertThat(s.route(r, fleet)).isSameAs(Route.HOLD);
    }
    fleet.now(50 * MS).waiting(0, 0).waiting(1, 0); // the next scrape: below saturation
    assertThat(s.route(held.get(0), fleet).held()).isFalse(); // the first cycle takes one
    assertThat(s.route(held.get(1), fleet)).isSameAs(Route.HOLD); // no tick left at 50 ms
    fleet.now(52 * MS); // two ticks later: two more
    assertThat(s.route(held.get(1), fleet).held()).isFalse();
    assertThat(s.route(held.get(2), fleet).held()).isFalse();
    assertThat(s.route(held.get(3), fleet)).isSameAs(Route.HOLD);
    assertThat(s.queued()).isEqualTo(2);
    // a new arrival with nothing queued ahead of it is dispatched by its own cycle
    assertThat(s.route(prompt(64), fleet).held()).isFalse();
  }

  @Test
  void aRequestHeldFor60SecondsIsShedAndItsRetryQueuesAnew() {
    LlmdFlowControlStrategy s = new LlmdFlowControlStrategy(1);
    FakeFleet full = new FakeFleet(2).waiting(0, 5).waiting(1, 5);
    SimRequest r = prompt(640);
    assertThat(s.route(r, full.now(1_000 * MS))).isSameAs(Route.HOLD);
    assertThat(s.route(r, full.now(60_999 * MS))).isSameAs(Route.HOLD);
    assertThat(s.route(r, full.now(61_000 * MS))).isNull();
    assertThat(s.queued()).isZero();
    // the client's retry waits its own 60 s
    assertThat(s.route(r, full.now(61_050 * MS))).isSameAs(Route.HOLD);
    assertThat(s.route(r, full.now(121_000 * MS))).isSameAs(Route.HOLD);
    assertThat(s.queued()).isEqualTo(1);
  }
}
