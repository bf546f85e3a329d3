package io.affinityrouter.examples.simulator.strategy;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.examples.simulator.workload.SimRequest;
import org.junit.jupiter.api.Test;

/**
 * Costs worked out by hand from Dynamo's default formula, with 16-token blocks: {@code
 * max(0, (in-flight prefill tokens + prompt tokens) / 16 − cached blocks)} plus the distinct
 * active blocks plus this prompt's full blocks not active.
 */
class DynamoKvCostStrategyTest {
  private long nextId;

  private SimRequest prompt(long[] segmentIds, int[] tokens, int outputTokens) {
    return new SimRequest(++nextId, null, 0, segmentIds, tokens, outputTokens, -1);
  }

  /** 100 tokens, 6 full blocks: 64 of a shared system prompt (segment 1), then 36 of its own. */
  private SimRequest a() {
    return prompt(new long[] {1, 2}, new int[] {64, 36}, 500);
  }

  /** 104 tokens, 6 full blocks, the first 4 shared with {@link #a()}. */
  private SimRequest b() {
    return prompt(new long[] {1, 3}, new int[] {64, 40}, 500);
  }

  @Test
  void costIsThePromptsBlocksLessTheCachedOnesPlusItsNewActiveBlocks() {
    FakeFleet fleet = new FakeFleet(2).cached(1, 48);
    DynamoKvCostStrategy s = new DynamoKvCostStrategy(1);
    // 100 / 16 = 6.25 prefill blocks, 6 full blocks become active
    assertThat(s.cost(0, a(), fleet)).isEqualTo(6.25 + 6);
    // 3 blocks cached: 6.25 - 3
    assertThat(s.cost(1, a(), fleet)).isEqualTo(3.25 + 6);
    // the output length is no input: the same prompt costs the same with 5 output tokens
    SimRequest shortAnswer = prompt(new long[] {1, 2}, new int[] {64, 36}, 5);
    assertThat(s.cost(1, shortAnswer, fleet)).isEqualTo(3.25 + 6);
    assertThat(s.route(a(), fleet).replicaIndex()).isEqualTo(1);
  }

  @Test
  void inFlightPrefillCountsUntilTheFirstTokenAndBlocksUntilTheEnd() {
    FakeFleet fleet = new FakeFleet(2).cached(0, 64);
    DynamoKvCostStrategy s = new DynamoKvCostStrategy(1);
    SimRequest first = a();
    // replica 0: 6.25 - 4 + 6 = 8.25; replica 1: 6.25 + 6 = 12.25
    Route route = s.route(first, fleet);
    assertThat(route.replicaIndex()).isEqualTo(0);
    SimRequest next = b();
    // 36 uncached tokens of the first in flight: (36 + 104) / 16 - 4 = 4.75;
    // its 6 blocks active, 2 of the next prompt's new
    assertThat(s.cost(0, next, fleet)).isEqualTo(4.75 + 8);
    assertThat(s.cost(1, next, fleet)).isEqualTo(6.5 + 6);

    s.onFirstToken(first, route);
    assertThat(s.cost(0, next, fleet)).isEqualTo(2.5 + 8);
    // a preempted request's first token comes again: nothing more to take off
    s.onFirstToken(first, route);
    assertThat(s.cost(0, next, fleet)).isEqualTo(2.5 + 8);

    s.onFinished(first, route, 500);
    assertThat(s.cost(0, next, fleet)).isEqualTo(2.5 + 6);
    assertThat(s.cost(1, next, fleet)).isEqualTo(6.5 + 6);
  }

  @Test
  void activeRequestsSharingAPrefixCountTheSharedBlocksOnce() {
    FakeFleet fleet = new FakeFleet(1);
    DynamoKvCostStrategy s = new DynamoKvCostStrategy(1);
    SimRequest first = a();
    SimRequest second = b();
    Route r1 = s.route(first, fleet);
    Route r2 = s.route(second, fleet);
    SimRequest system = prompt(new long[] {1}, new int[] {64}, 500);
    // prefill (100 + 104 + 64) / 16 = 16.75; active 4 shared + 2 + 2 = 8, none new
    assertThat(s.cost(0, system, fleet)).isEqualTo(16.75 + 8);

    s.onFirstToken(first, r1);
    s.onFirstToken(second, r2);
    assertThat(s.cost(0, system, fleet)).isEqualTo(4 + 8);
    s.onFinished(first, r1, 500);
    assertThat(s.cost(0, system, fleet)).isEqualTo(4 + 6);
    s.onFinished(second, r2, 500);
    assertThat(s.cost(0, system, fleet)).isEqualTo(4 + 4);
    // a request this router never sent changes nothing
    s.onFinished(a(), r1, 500);
    assertThat(s.cost(0, system, fleet)).isEqualTo(4 + 4);
  }

  @Test
  void aBlockAcrossSegmentsIsSharedOnlyWithTheSegmentHoldingItsLastToken() {
    FakeFleet fleet = new FakeFleet(1);
    DynamoKvCostStrategy s = new DynamoKvCostStrategy(1);
    SimRequest p = prompt(new long[] {1, 2, 3}, new int[] {10, 10, 12}, 10);
    s.onFirstToken(p, s.route(p, fleet));
    // block 0 is tokens [0, 16): segment 1 and 6 tokens of segment 2
    SimRequest sameFirstBlock = prompt(new long[] {1, 2, 4}, new int[] {10, 10, 12}, 10);
    SimRequest otherFirstBlock = prompt(new long[] {1, 5, 3}, new int[] {10, 10, 12}, 10);
    assertThat(s.cost(0, sameFirstBlock, fleet)).isEqualTo(2 + 2 + 1);
    assertThat(s.cost(0, otherFirstBlock, fleet)).isEqualTo(2 + 2 + 2);
  }

  @Test
  void tiesGoToTheSeededRandomAndTheLowestCostAlwaysWins() {
    int[] picks = new int[2];
    for (long seed = 0; seed < 200; seed++) {
      int pick = new DynamoKvCostStrategy(seed).route(a(), new FakeFleet(2)).replicaIndex();
      picks[pick]++;
      assertThat(new DynamoKvCostStrategy(seed).route(a(), new FakeFleet(2)).replicaIndex())
          .as("seed %d", seed).isEqualTo(pick);
      // one cached block on replica 1 breaks the tie
      assertThat(new DynamoKvCostStrategy(seed).route(a(), new FakeFleet(2).cached(1, 16))
          .replicaIndex()).as("seed %d", seed).isEqualTo(1);
    }
    assertThat(picks[0]).isBetween(60, 140);
  }
}
