package io.affinityrouter.examples.simulator.strategy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

class StrategyRegistryTest {
  private final StrategyRegistry registry =
      StrategyRegistry.standard().withRouterVariants("k1=topK:1");

  @Test
  void theRouterAndItsVariantsAreNotPeers() {
    for (String name : new String[] {"affinity-router", "affinity-router-nosess", "k1"}) {
      assertThat(registry.isRouter(name)).as(name).isTrue();
      assertThat(registry.isPeer(name)).as(name).isFalse();
    }
  }

  @Test
  void theLoadExchangeVariantTakesANonNegativeInterval() {
    assertThat(StrategyRegistry.standard().withRouterVariants("x=loadExchangeMillis:100")
        .isRouter("x")).isTrue();
    assertThatThrownBy(() -> StrategyRegistry.standard()
        .withRouterVariants("x=loadExchangeMillis:-1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("loadExchangeMillis: -1 (expected: >= 0)");
  }

  @Test
  void variantsTakeOperatorOptionsAndEngineFiguresOnly() {
    assertThat(StrategyRegistry.standard()
        .withRouterVariants("x=prefillTokensPerSecond:40000,attentionSeconds:0").isRouter("x"))
        .isTrue();
    assertThatThrownBy(() -> StrategyRegistry.standard()
        .withRouterVariants("x=prefillTokensPerSecond:-1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("prefillTokensPerSecond: -1.0 (expected: > 0 and finite)");
    assertThatThrownBy(() -> StrategyRegistry.standard().withRouterVariants("x=repinSavings:16"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("router option: repinSavings (expected: one of [topK,");
  }

  @Test
  void emulationsArePeersAndTheBoundIsNot() {
    for (String name : new String[] {"sglang-cache-aware", "sglang-cache-aware-2025", "llm-d",
        "llm-d-2025", "dynamo-kv", "consistent-hash", "round-robin"}) {
      assertThat(registry.isPeer(name)).as(name).isTrue();
      assertThat(registry.isRouter(name)).as(name).isFalse();
    }
    assertThat(registry.isPeer("infinite-cache")).isFalse();
    assertThat(registry.isPeer("no-such-strategy")).isFalse();
    assertThat(StrategyRegistry.standard().isRouter("k1")).isFalse();
  }

  @Test
  void llmdEntriesScrapeEvery50MillisecondsAndOthersAtTheRunsInterval() {
    for (StrategyRegistry.Entry e : registry.select(List.of("llm-d", "llm-d-2025"))) {
      assertThat(e.scrapeNanos()).as(e.name()).isEqualTo(50_000_000L);
    }
    for (StrategyRegistry.Entry e : registry.select(List.of("affinity-router", "random",
        "sglang-cache-aware", "dynamo-kv", "aibrix-prefix", "infinite-cache"))) {
      assertThat(e.scrapeNanos()).as(e.name()).isZero();
    }
  }
}
