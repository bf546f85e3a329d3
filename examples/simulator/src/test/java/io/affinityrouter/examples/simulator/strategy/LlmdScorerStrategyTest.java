package io.affinityrouter.examples.simulator.strategy;

import static io.affinityrouter.examples.simulator.strategy.LlmdScorerStrategy.CURRENT;
import static io.affinityrouter.examples.simulator.strategy.LlmdScorerStrategy.GAIE_2025;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class LlmdScorerStrategyTest {
  private long nextId;

  private SimRequest prompt(long[] segmentIds, int[] tokens) {
    return new SimRequest(++nextId, null, 0, segmentIds, tokens, 10, -1);
  }

  /** A prompt of one segment of {@code tokens} tokens, its own unless {@code id} repeats. */
  private SimRequest prompt(long id, int tokens) {
    return prompt(new long[] {id}, new int[] {tokens});
  }

  private static long[] blocks(SimRequest r, LlmdScorerStrategy.PrefixDefaults d, FakeFleet f) {
    int block = d.blockTokens(f);
    return LlmdScorerStrategy.blockKeys(r, block, d.maxPrefixTokens() / block,
        d.hashesPartialBlock());
  }

  @Test
  void blockKeysAreEqualUpToTheBlockWhereThePromptsDiffer() {
    SimRequest a = prompt(new long[] {1, 2}, new int[] {100, 60});
    SimRequest b = prompt(new long[] {1, 3}, new int[] {100, 60});
    long[] ka = LlmdScorerStrategy.blockKeys(a, 16, 256, false);
    long[] kb = LlmdScorerStrategy.blockKeys(b, 16, 256, false);
    assertThat(ka).hasSize(10).doesNotHaveDuplicates();
    // blocks [0, 96) lie in the shared segment; [96, 112) already holds a differing token
    assertThat(Arrays.copyOf(ka, 6)).containsExactly(Arrays.copyOf(kb, 6));
    for (int i = 6; i < 10; i++) {
      assertThat(ka[i]).as("block %d", i).isNotEqualTo(kb[i]);
    }
  }

  @Test
  void currentDefaultsUse64TokenBlocksAndAPartialLastBlock() {
    FakeFleet fleet = new FakeFleet(1);
    assertThat(CURRENT.blockTokens(fleet)).isEqualTo(64);
    assertThat(CURRENT.blockTokens(new FakeFleet(1, 128, 1 << 20))).isEqualTo(128);
    long[] k100 = blocks(prompt(5, 100), CURRENT, fleet);
    long[] k128 = blocks(prompt(5, 128), CURRENT, fleet);
    assertThat(k100).hasSize(2);
    assertThat(k128).hasSize(2);
    // the first block is shared; a 36-token tail is not the 64-token block that starts alike
    assertThat(k100[0]).isEqualTo(k128[0]);
    assertThat(k100[1]).isNotEqualTo(k128[1]);
  }

  @Test
  void the2025DefaultsUse16TokenBlocksAndIgnoreAPartialLastBlock() {
    FakeFleet fleet = new FakeFleet(1);
    assertThat(GAIE_2025.blockTokens(fleet)).isEqualTo(16);
    assertThat(blocks(prompt(5, 100), GAIE_2025, fleet)).hasSize(6);
    assertThat(blocks(prompt(6, 15), GAIE_2025, fleet)).isEmpty();
  }

  @Test
  void currentDefaultsHashAtMost2048BlocksOf64Tokens() {
    FakeFleet fleet = new FakeFleet(2);
    LlmdScorerStrategy s = new LlmdScorerStrategy(1, CURRENT);
    SimRequest longPrompt = prompt(new long[] {7, 8}, new int[] {131_072, 70_000});
    int r = s.route(longPrompt, fleet).replicaIndex();
    assertThat(s.indexedBlocks(r)).isEqualTo(2048);
    // a prompt that differs only after token 131,072 matches in full
    long[] other = blocks(prompt(new long[] {7, 9}, new int[] {131_072, 500}), CURRENT, fleet);
    assertThat(other).hasSize(2048);
    assertThat(s.matchedBlocks(r, other)).isEqualTo(2048);
  }

  @Test
  void the2025DefaultsMatchOnlyTheFirst256Blocks() {
    FakeFleet fleet = new FakeFleet(2);
    LlmdScorerStrategy s = new LlmdScorerStrategy(1, GAIE_2025);
    int r = s.route(prompt(new long[] {7, 8}, new int[] {4096, 904}), fleet).replicaIndex();
    assertThat(s.indexedBlocks(r)).isEqualTo(256);
    long[] other = blocks(prompt(new long[] {7, 9}, new int[] {4096, 3000}), GAIE_2025, fleet);
    assertThat(s.matchedBlocks(r, other)).isEqualTo(256).isEqualTo(other.length);
  }

  @Test
  void eachPodsIndexIsSizedFromItsGpuBlocksOrHolds31250Entries() {
    FakeFleet fleet = new FakeFleet(1, 16, 1_082_544);
    assertThat(CURRENT.lruCapacity(fleet, 0)).isEqualTo(67_659);
    assertThat(GAIE_2025.lruCapacity(fleet, 0)).isEqualTo(31_250);
  }

  @Test
  void aPodsIndexKeepsItsMostRecent31250Blocks() {
    FakeFleet fleet = new FakeFleet(1);
    LlmdScorerStrategy s = new LlmdScorerStrategy(1, GAIE_2025);
    SimRequest[] prompts = new SimRequest[130];
    for (int i = 0; i < prompts.length; i++) {
      prompts[i] = prompt(100 + i, 4096);
    }
    for (int i = 0; i < prompts.length; i++) {
      s.route(prompts[i], fleet);
      if (i == 60) {
        // sending prompt 0 again makes its blocks the most recent
        s.route(prompts[0], fleet);
      }
      assertThat(s.indexedBlocks(0)).isLessThanOrEqualTo(31_250);
    }
    // 130 prompts of 256 blocks: the 2,030 least recent blocks went, prompts 1-7 and most of 8
    assertThat(s.indexedBlocks(0)).isEqualTo(31_250);
    assertThat(s.matchedBlocks(0, blocks(prompts[0], GAIE_2025, fleet))).isEqualTo(256);
    assertThat(s.matchedBlocks(0, blocks(prompts[1], GAIE_2025, fleet))).isZero();
    assertThat(s.matchedBlocks(0, blocks(prompts[8], GAIE_2025, fleet))).isZero();
    assertThat(s.matchedBlocks(0, blocks(prompts[9], GAIE_2025, fleet))).isEqualTo(256);
  }

  @Test
  void aRepeatedPromptReturnsToItsPod() {
    FakeFleet fleet = new FakeFleet(4);
    LlmdScorerStrategy s = new LlmdScorerStrategy(3, CURRENT);
    int r = s.route(prompt(42, 5000), fleet).replicaIndex();
    for (int i = 0; i < 10; i++) {
      assertThat(s.route(prompt(42, 5000), fleet).replicaIndex()).isEqualTo(r);
    }
  }

  @Test
  void aLongQueueOutweighsAHalfMatch() {
    FakeFleet fleet = new FakeFleet(2).waiting(1, 10);
    LlmdScorerStrategy s = new LlmdScorerStrategy(1, CURRENT);
    // an empty queue (2) beats the longer one (0): replica 0
    assertThat(s.route(prompt(new long[] {1, 2}, new int[] {640, 640}), fleet).replicaIndex())
        .isZero();
    // half the prompt on replica 0 (3 · 0.5) loses to its queue: 1.5 + 0 + 2 < 0 + 2 + 2
    fleet.waiting(0, 10).waiting(1, 0);
    assertThat(s.route(prompt(new long[] {1, 3}, new int[] {640, 640}), fleet).replicaIndex())
        .isEqualTo(1);
  }
}
