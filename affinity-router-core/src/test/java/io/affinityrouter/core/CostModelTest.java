package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.core.TestClock;
import org.junit.jupiter.api.Test;

class CostModelTest {
  private final CostModel model = new CostModel(40_000, 512, 0, 0);
  private final CostModel quadratic = new CostModel(40_000, 512, 9.2e-10, 0);
  private final TestClock clock = new TestClock();
  private final LoadTracker tracker = new LoadTracker(10, clock);

  @Test
  void prefillIsUncachedTokensOverThroughputTimesBatchSlowdown() {
    assertThat(model.prefillSeconds(8000, 0, model.slowdown(0))).isCloseTo(0.2, within(1e-9));
    assertThat(model.prefillSeconds(8000, 0, model.slowdown(512))).isCloseTo(0.4, within(1e-9));
  }

  @Test
  void queueCountsTheLargerOfOwnPrefillWorkAndTheEnginesWaitingRequests() {
    ReplicaState s = tracker.state("a");
    ReplicaLoad idle = ReplicaLoad.UNKNOWN;
    assertThat(model.queueSeconds(idle, s, tracker, 1000, 0, 1)).isZero();
    ReplicaLoad waiting = ReplicaLoad.builder().waitingRequests(4).build();
    // 4 waiting × 1,024 average uncached prompt tokens / 40k tokens/s.
    assertThat(model.queueSeconds(waiting, s, tracker, 1000, 0, 1))
        .isCloseTo(4 * LoadTracker.PROMPT_TOKENS_PRIOR / 40_000, within(1e-9));
    assertThat(s.tryAcquire(100, Long.MAX_VALUE, 20_000)).isTrue();
    tracker.open(s, 20_000, 20_000, 0);
    assertThat(model.queueSeconds(waiting, s, tracker, 1000, 1, 1))
        .isCloseTo(0.5, within(1e-9)); // own 20k tokens beat the stale snapshot
  }

  @Test
  void ownQueuedPrefillCountsInSecondsAndDrainsAsTimePasses() {
    ReplicaState s = tracker.state("w");
    ReplicaLoad idle = ReplicaLoad.UNKNOWN;
    assertThat(s.tryAcquire(100, Long.MAX_VALUE, 8_000)).isTrue();
    // 8k tokens, but 3 s of estimated prefill (a long-context attention term, say).
    var lease = tracker.open(s, 8_000, 8_000, 0, 3.0);
    assertThat(model.queueSeconds(idle, s, tracker, 1000, 0, 1)).isCloseTo(3.0, within(1e-9));
    clock.advance(java.time.Duration.ofSeconds(1));
    assertThat(model.queueSeconds(idle, s, tracker, 1000, 0, 1)).isCloseTo(2.0, within(1e-9));
    lease.markFirstToken();
    assertThat(model.queueSeconds(idle, s, tracker, 1000, 0, 1)).isZero();
  }

  @Test
  void eachRunningSequenceAddsItsQueueCost() {
    CostModel perSequence = new CostModel(40_000, 512, 0, 0.004);
    ReplicaState s = tracker.state("r");
    assertThat(perSequence.queueSeconds(ReplicaLoad.UNKNOWN, s, tracker, 1000, 25, 1))
        .isCloseTo(0.1, within(1e-9));
    assertThat(new CostModel(40_000, 512, 0).queueSeconds(ReplicaLoad.UNKNOWN, s, tracker, 1000,
        25, 1)).isCloseTo(25 * EngineProfile.QWEN2_5_7B_H100.runningSequenceSeconds(), within(1e-9));
  }

  @Test
  void aFullKvCacheAddsTheTimeToFreeTheDeficit() {
    ReplicaState s = tracker.state("b");
    ReplicaLoad full = ReplicaLoad.builder().kvCapacityTokens(100_000).kvUsage(0.99)
        .outputTokensPerSecond(2_000).build();
    double q = model.queueSeconds(full, s, tracker, 3_000, 10, 1);
    // deficit 2,000 tokens; freed at 2,000 tok/s / 256 output per request × 1,280 tokens each.
    assertThat(q).isCloseTo(2_000 / (2_000.0 / 256 * 1_280), within(1e-9));
    ReplicaLoad roomy = full.toBuilder().kvUsage(0.5).build();
    assertThat(model.queueSeconds(roomy, s, tracker, 3_000, 10, 1)).isZero();
  }

  @Test
  void otherGatewaysRequestsOnTheReplicaCountInTheKvWait() {
    ReplicaState s = tracker.state("c");
    s.tryAcquire(100, Long.MAX_VALUE, 20_000);
    s.tryAcquire(100, Long.MAX_VALUE, 20_000);
    ReplicaLoad own = ReplicaLoad.builder().kvCapacityTokens(100_000).kvUsage(0.3)
        .runningRequests(2).outputTokensPerSecond(2_000).build();
    assertThat(model.queueSeconds(own, s, tracker, 3_000, 10, 1)).isZero();
    // Eight running: six more like this router's two hold 160,000 tokens by their last.
    ReplicaLoad shared = own.toBuilder().runningRequests(8).build();
    assertThat(model.queueSeconds(shared, s, tracker, 3_000, 10, 1))
        .isCloseTo(63_000 / (2_000.0 / 256 * 1_280), within(1e-9));
  }

  @Test
  void aCachedPrefixWinsUntilItsQueueCostsMoreThanTheRecompute() {
    double slow = model.slowdown(0);
    double recompute = model.prefillSeconds(8_000, 0, slow);
    double cachedWithQueue = model.prefillSeconds(500, 7_500, slow) + 7_000 / 40_000.0;
    double cachedWithLongerQueue = model.prefillSeconds(500, 7_500, slow) + 8_000 / 40_000.0;
    assertThat(cachedWithQueue).isLessThan(recompute);
    assertThat(cachedWithLongerQueue).isGreaterThan(recompute);
  }

  @Test
  void attentionMakesRecomputingALongContextCostMoreThanItsLength() {
    // 32k tokens from scratch: 0.8 s linear + 9.2e-10 × 32,768 × 16,384 = 0.494 s attention.
    assertThat(quadratic.prefillSeconds(32_768, 0, 1)).isCloseTo(0.8192 + 0.4939, within(1e-3));
    // The last 1k tokens after 31k cached: linear 25.6 ms plus attention to the cached context.
    assertThat(quadratic.prefillSeconds(1_024, 31_744, 1))
        .isCloseTo(0.0256 + 9.2e-10 * 1024 * (31_744 + 512), within(1e-6));
  }

  @Test
  void badSettingsAreRefused() {
    assertThatThrownBy(() -> new CostModel(0, 1, 0))
        .hasMessage("prefillTokensPerSecond: 0.0 (expected: > 0 and finite)");
    assertThatThrownBy(() -> new CostModel(1, 1, 0, -0.001))
        .hasMessage("runningSequenceSeconds: -0.001 (expected: >= 0 and finite)");
  }
}
