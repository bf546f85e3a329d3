package io.affinityrouter.examples.simulator.strategy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class AibrixPrefixCacheStrategyTest {
  private static final long MINUTE = TimeUnit.MINUTES.toNanos(1);
  private static final long MILLI = TimeUnit.MILLISECONDS.toNanos(1);

  private long nextId;

  /** A prompt of the given segments (ids and token lengths in pairs). */
  private SimRequest prompt(long... idsAndTokens) {
    long[] ids = new long[idsAndTokens.length / 2];
    int[] tokens = new int[ids.length];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = idsAndTokens[2 * i];
      tokens[i] = (int) idsAndTokens[2 * i + 1];
    }
    return new SimRequest(++nextId, null, 0, ids, tokens, 10, -1);
  }

  @Test
  void theFleetWideLruDropsTheOldestBlocksPastItsCap() {
    AibrixPrefixCacheStrategy s = new AibrixPrefixCacheStrategy(1, 10, 1);
    FakeFleet fleet = new FakeFleet(2);
    SimRequest a = prompt(1, 6);
    SimRequest b = prompt(2, 6);
    s.sent(a, 0, 0);
    s.sent(b, 1, 0);
    // 12 blocks for a table of 10: a's first two blocks, the least recently put, are gone
    assertThat(s.heldBlocks()).isEqualTo(10);
    // loads (0, 1): mean 0.5, sample σ 0.71, so both pods are within mean + σ
    assertThat(s.route(b, fleet.inFlight(0, 1))).isEqualTo(Route.of(1, "prefix"));
    // a's last four blocks are held, but a match starts at the first block
    assertThat(s.route(a, fleet.inFlight(1, 0))).isEqualTo(Route.of(1, "least-request"));
  }

  @Test
  void aTableWithRoomKeepsTheWholePrompt() {
    AibrixPrefixCacheStrategy s = new AibrixPrefixCacheStrategy(1, 12, 1);
    FakeFleet fleet = new FakeFleet(2);
    SimRequest a = prompt(1, 6);
    s.sent(a, 0, 0);
    s.sent(prompt(2, 6), 1, 0);
    assertThat(s.heldBlocks()).isEqualTo(12);
    assertThat(s.route(a, fleet.inFlight(1, 0))).isEqualTo(Route.of(0, "prefix"));
  }

  @Test
  void blocksExpireAfterTwentyIdleMinutesAtTheNextOnceASecondSweep() {
    AibrixPrefixCacheStrategy s = new AibrixPrefixCacheStrategy(1);
    FakeFleet fleet = new FakeFleet(2).inFlight(1, 0);
    SimRequest a = prompt(1, 100);
    s.sent(a, 0, 0);
    // idle 20 min 0.999 s, but the last sweep (at 20 min) saw 20 min, not more
    assertThat(s.route(a, fleet.now(20 * MINUTE + 999 * MILLI))).isEqualTo(Route.of(0, "prefix"));
    // the route put the blocks again: the sweep at 40 min sees 19 min 59.001 s
    assertThat(s.route(a, fleet.now(40 * MINUTE + 999 * MILLI))).isEqualTo(Route.of(0, "prefix"));
    // the sweep at 60 min 2 s sees 20 min 1.001 s
    assertThat(s.route(a, fleet.now(60 * MINUTE + 2_000 * MILLI)))
        .isEqualTo(Route.of(1, "least-request"));
    assertThat(s.heldBlocks()).isEqualTo(100);
  }

  @Test
  void imbalancedLoadStillMatchesAmongThePodsWithTheFewestRunningRequests() {
    AibrixPrefixCacheStrategy s = new AibrixPrefixCacheStrategy(1);
    FakeFleet fleet = new FakeFleet(4);
    SimRequest p = prompt(1, 100);
    s.sent(p, 0, 0);
    s.sent(p, 2, 0);
    // max − min = 9 > 8: pods 1, 2 and 3 hold the minimum, of which 2 matches
    fleet.inFlight(12, 3, 3, 3);
    for (int i = 0; i < 10; i++) {
      assertThat(s.route(p, fleet)).isEqualTo(Route.of(2, "imbalance-prefix"));
    }
    // pod 2 is no longer among the least loaded, and no pod of the minimum matches
    Route r = s.route(p, fleet.inFlight(12, 3, 4, 3));
    assertThat(r.reason()).isEqualTo("imbalance");
    assertThat(r.replicaIndex()).isIn(1, 3);
  }

  @Test
  void aSpreadOfEightIsStillBalanced() {
    AibrixPrefixCacheStrategy s = new AibrixPrefixCacheStrategy(1);
    SimRequest p = prompt(1, 100);
    s.sent(p, 0, 0);
    s.sent(p, 3, 0);
    // loads (11, 3, 3, 4): mean 5.25, squares 33.06 + 5.06 + 5.06 + 1.56 = 44.75, sample σ
    // sqrt(44.75 / 3) = 3.86, limit 9.11: pod 0 is too busy, pod 3 matches within it
    FakeFleet fleet = new FakeFleet(4).inFlight(11, 3, 3, 4);
    assertThat(s.route(p, fleet)).isEqualTo(Route.of(3, "prefix"));
  }

  @Test
  void balancedLoadTakesTheBestMatchWithinMeanPlusTheSampleDeviation() {
    AibrixPrefixCacheStrategy s = new AibrixPrefixCacheStrategy(1);
    FakeFleet fleet = new FakeFleet(3);
    SimRequest p = prompt(1, 100, 2, 100);
    s.sent(p, 0, 0);
    s.sent(prompt(1, 100, 3, 100), 1, 0);
    // p matches 200 of 200 blocks on pod 0 (100 %), 100 on pod 1 (50 %), none on pod 2;
    // loads (3, 2, 0): mean 5/3, squares 16/9 + 1/9 + 25/9 = 14/3, sample σ sqrt(7/3) = 1.53,
    // limit 3.19 (the population σ, 1.25, would give 2.91 and leave pod 0 out)
    assertThat(s.route(p, fleet.inFlight(3, 2, 0))).isEqualTo(Route.of(0, "prefix"));
    // loads (5, 2, 0): mean 7/3, squares 64/9 + 1/9 + 49/9 = 114/9, σ sqrt(57/9) = 2.52,
    // limit 4.85: pod 0 is out, pod 1's 50 % wins over the least-loaded pod 2
    assertThat(s.route(p, fleet.inFlight(5, 2, 0))).isEqualTo(Route.of(1, "prefix"));
    // that route put p on pod 1: both match 100 %, and the fewer running requests win
    assertThat(s.route(p, fleet.inFlight(3, 2, 0))).isEqualTo(Route.of(1, "prefix"));
  }

  @Test
  void matchedPodsAboveMeanPlusSigmaFallBackToLeastRequest() {
    AibrixPrefixCacheStrategy s = new AibrixPrefixCacheStrategy(1);
    SimRequest p = prompt(1, 100);
    s.sent(p, 0, 0);
    // loads (8, 1, 1, 1, 1, 0): mean 2, squares 36 + 4·1 + 4 = 44, σ sqrt(44 / 5) = 2.97,
    // limit 4.97
    FakeFleet fleet = new FakeFleet(6).inFlight(8, 1, 1, 1, 1, 0);
    assertThat(s.route(p, fleet)).isEqualTo(Route.of(5, "prefix-skipped"));
  }

  @Test
  void aMatchRoundedDownToZeroPercentStillCounts() {
    AibrixPrefixCacheStrategy s = new AibrixPrefixCacheStrategy(1);
    s.sent(prompt(1, 1, 2, 200), 0, 0);
    // 1 of 201 blocks: 100 / 201 is 0 in integer division, yet pod 0 is a matched pod
    FakeFleet fleet = new FakeFleet(2).inFlight(1, 0);
    assertThat(s.route(prompt(1, 1, 3, 200), fleet)).isEqualTo(Route.of(0, "prefix"));
  }

  @Test
  void onlyFullBlocksAreHashedAndABlockBelongsToTheSegmentOfItsLastToken() {
    AibrixPrefixCacheStrategy s = new AibrixPrefixCacheStrategy(1, 100, 16);
    s.sent(prompt(1, 15), 0, 0);
    assertThat(s.heldBlocks()).isZero();
    // 40 tokens: blocks [0, 16) and [16, 32) both end in the second segment; [32, 40) is partial
    SimRequest p = prompt(2, 10, 3, 30);
    s.sent(p, 0, 0);
    assertThat(s.heldBlocks()).isEqualTo(2);
    // the same first block with another second segment shares no block
    FakeFleet fleet = new FakeFleet(2).inFlight(1, 0);
    assertThat(s.route(prompt(2, 10, 4, 30), fleet)).isEqualTo(Route.of(1, "least-request"));
    assertThat(s.route(p, fleet)).isEqualTo(Route.of(0, "prefix"));
  }

  @Test
  void rejectsANonPositiveTableOrBlock() {
    assertThatThrownBy(() -> new AibrixPrefixCacheStrategy(1, 0, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxBlocks: 0 (expected: > 0)");
    assertThatThrownBy(() -> new AibrixPrefixCacheStrategy(1, 10, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("blockTokens: 0 (expected: > 0)");
  }
}
