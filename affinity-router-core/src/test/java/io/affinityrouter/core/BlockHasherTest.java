package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.Prompts;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class BlockHasherTest {
  private final BlockHasher hasher = BlockHasher.defaults();

  private long[] hash(int[] tokens, String tenant) {
    RoutingRequest.Builder b = RoutingRequest.builder().promptTokens(tokens);
    if (tenant != null) {
      b.tenant(tenant);
    }
    return hasher.hash(b.build());
  }

  @Test
  void onlyFullBlocksAreHashed() {
    assertThat(hash(new int[15], null)).isEmpty();
    assertThat(hash(new int[16], null)).hasSize(1);
    assertThat(hash(new int[100], null)).hasSize(6);
  }

  @Test
  void equalPrefixesGiveEqualHashesAndTheChainCarriesDifferences() {
    int[] a = Prompts.tokens(1, 160);
    int[] b = a.clone();
    b[40] ^= 1; // block 2 differs
    long[] ha = hash(a, null);
    long[] hb = hash(b, null);
    assertThat(Arrays.copyOf(hb, 2)).containsExactly(ha[0], ha[1]);
    for (int i = 2; i < ha.length; i++) {
      assertThat(hb[i]).isNotEqualTo(ha[i]); // every later block differs through the chain
    }
  }

  @Test
  void tenantModelAndSeedSaltTheChain() {
    int[] t = Prompts.tokens(2, 64);
    assertThat(hash(t, "a")[0]).isNotEqualTo(hash(t, "b")[0]).isNotEqualTo(hash(t, null)[0]);
    long m1 = hasher.hash(RoutingRequest.builder().model("x").promptTokens(t).build())[0];
    long m2 = hasher.hash(RoutingRequest.builder().model("y").promptTokens(t).build())[0];
    assertThat(m1).isNotEqualTo(m2);
    BlockHasher seeded = new BlockHasher(16, 64, 100, 42);
    assertThat(seeded.hash(RoutingRequest.builder().promptTokens(t).build())[0])
        .isNotEqualTo(hash(t, null)[0]);
  }

  @Test
  void hashingIsDeterministicAndNeverZero() {
    int[] t = new int[16 * 1000];
    long[] h1 = hash(t, null);
    assertThat(hash(t, null)).containsExactly(h1);
    assertThat(h1).doesNotContain(0L);
    assertThat(Arrays.stream(h1).distinct().count()).isEqualTo(1000); // zeros still chain apart
  }

  @Test
  void longPromptsAreCappedAtMaxPromptBlocks() {
    BlockHasher capped = new BlockHasher(16, 64, 10, 0);
    RoutingRequest r = RoutingRequest.builder().promptTokens(new int[16 * 50]).build();
    assertThat(capped.blockCount(r)).isEqualTo(10);
    assertThat(capped.hash(r)).hasSize(10);
  }

  @Test
  void textIsHashedInCharacterBlocksWithTheSameChainingRules() {
    String common = "x".repeat(128);
    long[] a = hasher.hash(RoutingRequest.builder().promptText(common + "abc".repeat(30)).build());
    long[] b = hasher.hash(RoutingRequest.builder().promptText(common + "abd".repeat(30)).build());
    assertThat(a).hasSize((128 + 90) / 64);
    assertThat(b[0]).isEqualTo(a[0]);
    assertThat(b[1]).isEqualTo(a[1]);
    assertThat(b[2]).isNotEqualTo(a[2]);
    assertThat(hasher.tokensPerBlock(RoutingRequest.builder().promptText("x").build()))
        .isEqualTo(16);
  }

  @Test
  void singleBlocksChainLikeWholePrompts() {
    int[] t = Prompts.tokens(3, 48);
    long[] whole = hash(t, null);
    long h = hasher.chainSeed("", "");
    for (int b = 0; b < 3; b++) {
      h = hasher.hashTokenBlock(h, t, b * 16, 16);
      assertThat(h).isEqualTo(whole[b]);
    }
  }

  @Test
  void badSizesAreRefused() {
    assertThatThrownBy(() -> new BlockHasher(0, 64, 10, 0))
        .hasMessage("tokenBlockSize: 0 (expected: > 0)");
    assertThatThrownBy(() -> hasher.hash(RoutingRequest.builder().promptTokens(new int[64])
        .build(), new long[2])).hasMessage("out: 2 (expected: >= 4)");
  }
}
