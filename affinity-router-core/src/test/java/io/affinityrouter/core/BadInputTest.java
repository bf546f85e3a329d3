package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Bad input gets a documented IllegalArgumentException or a not-routed decision, never corruption. */
class BadInputTest {
  private final Router router = AffinityRouter.builder().build();

  @Test
  void sessionIdsAreCheckedAtTheBoundary() {
    assertThatThrownBy(() -> RoutingRequest.builder().sessionId(null))
        .isInstanceOf(NullPointerException.class).hasMessage("sessionId");
    assertThatThrownBy(() -> RoutingRequest.builder().sessionId("  "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("sessionId: blank (expected: a non-blank string)");
    assertThatThrownBy(() -> RoutingRequest.builder().sessionId("x".repeat(257)))
        .hasMessage("sessionId: 257 bytes (expected: <= 256 bytes in UTF-8)");
    // 100 characters, 300 bytes in UTF-8.
    assertThatThrownBy(() -> RoutingRequest.builder().sessionId("€".repeat(100)))
        .hasMessage("sessionId: 300 bytes (expected: <= 256 bytes in UTF-8)");
    assertThat(RoutingRequest.builder().sessionId("x".repeat(256)).promptTokens(new int[1])
        .build().sessionId()).hasValue("x".repeat(256));
  }

  @Test
  void aRequestNeedsAPrompt() {
    assertThatThrownBy(() -> RoutingRequest.builder().sessionId("s").build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("prompt: none (expected: promptTokens, promptText or promptBlockHashes)");
  }

  @Test
  void emptyReplicaListIsNotRouted() {
    RoutingDecision d = router.select(Prompts.session("s", new int[64]), List.of());
    assertThat(d.isRouted()).isFalse();
    assertThat(d.reason()).isEqualTo(RoutingReason.NO_REPLICA);
    assertThatThrownBy(d::replica).isInstanceOf(IllegalStateException.class)
        .hasMessage("not routed: NO_REPLICA");
  }

  @Test
  void duplicateReplicaIdsAreRefusedWithoutLeakingAnything() {
    List<Replica> dup = List.of(Replica.of("a"), Replica.of("b"), Replica.of("a"));
    assertThatThrownBy(() -> router.select(Prompts.session("s", new int[64]), dup))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("replicas: duplicate id a");
    // Nothing was admitted or bound: the next decision sees idle replicas and claims afresh.
    RoutingDecision d = router.select(Prompts.session("s", new int[64]), List.of(Replica.of("a")));
    assertThat(d.reason()).isEqualTo(RoutingReason.SESSION_CLAIMED);
    assertThat(d.scores().queueSeconds()).isZero();
  }

  @Test
  void negativeOrNanLoadFiguresAreRefused() {
    assertThatThrownBy(() -> ReplicaLoad.builder().runningRequests(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("runningRequests: -1 (expected: >= 0)");
    assertThatThrownBy(() -> ReplicaLoad.builder().kvUsage(Double.NaN))
        .hasMessage("kvUsage: NaN (expected: 0..1)");
    assertThatThrownBy(() -> ReplicaLoad.builder().kvUsage(1.5))
        .hasMessage("kvUsage: 1.5 (expected: 0..1)");
    assertThatThrownBy(() -> ReplicaLoad.builder().outputTokensPerSecond(Double.NaN))
        .hasMessage("outputTokensPerSecond: NaN (expected: >= 0 and finite)");
    assertThatThrownBy(() -> ReplicaLoad.builder().kvCapacityTokens(-5))
        .hasMessage("kvCapacityTokens: -5 (expected: >= 0)");
  }

  @Test
  void aMillionTokenPromptRoutesWithItsHashingCapped() {
    int[] huge = new int[1_000_000];
    RoutingDecision d = router.select(Prompts.session("big", huge), Prompts.replicas(3));
    assertThat(d.isRouted()).isTrue();
    assertThat(d.promptBlocks()).isEqualTo(BlockHasher.DEFAULT_MAX_PROMPT_BLOCKS);
    // Its full size still counts as prefill work: 1M tokens at 48k tokens/s, and attention.
    assertThat(d.scores().prefillSeconds()).isGreaterThan(20);
    d.lease().close();
  }

  @Test
  void badEngineProfileFiguresAreRefusedWithTheirName() {
    EngineProfile p = EngineProfile.QWEN2_5_7B_H100;
    assertThatThrownBy(() -> new EngineProfile(-1, 0, 1, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("prefillTokensPerSecond: -1.0 (expected: > 0 and finite)");
    assertThatThrownBy(() -> p.withPrefillTokensPerSecond(0))
        .hasMessage("prefillTokensPerSecond: 0.0 (expected: > 0 and finite)");
    assertThatThrownBy(() -> p.withPrefillTokensPerSecond(Double.POSITIVE_INFINITY))
        .hasMessage("prefillTokensPerSecond: Infinity (expected: > 0 and finite)");
    assertThatThrownBy(() -> p.withAttentionSeconds(-1e-9))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("attentionSeconds: -1.0E-9 (expected: >= 0 and finite)");
    assertThatThrownBy(() -> p.withBatchSlowdownSequences(Double.NaN))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("batchSlowdownSequences: NaN (expected: > 0 and finite)");
    assertThatThrownBy(() -> p.withRunningSequenceSeconds(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("runningSequenceSeconds: -1.0 (expected: >= 0 and finite)");
    // Zero attention and zero running-sequence cost are allowed: linear prefill, slowdown alone.
    EngineProfile linear = p.withAttentionSeconds(0).withRunningSequenceSeconds(0);
    assertThat(linear.attentionSeconds()).isZero();
    assertThat(linear.runningSequenceSeconds()).isZero();
    assertThat(linear.prefillTokensPerSecond()).isEqualTo(p.prefillTokensPerSecond());
    assertThat(linear.batchSlowdownSequences()).isEqualTo(p.batchSlowdownSequences());
  }

  @Test
  void builderOptionsAreValidated() {
    assertThatThrownBy(() -> AffinityRouter.builder().topK(0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("topK: 0 (expected: > 0)");
    assertThatThrownBy(() -> AffinityRouter.builder().bindingTtl(java.time.Duration.ZERO))
        .hasMessage("bindingTtl: PT0S (expected: > 0)");
    assertThatThrownBy(() -> AffinityRouter.builder().prefixIndexEntries(5))
        .hasMessage("prefixIndexEntries: 5 (expected: >= 1024)");
    assertThatThrownBy(() -> AffinityRouter.builder().engineProfile(null))
        .isInstanceOf(NullPointerException.class).hasMessage("engineProfile");
    assertThatThrownBy(() -> Replica.builder(" "))
        .hasMessage("id: blank (expected: a non-blank string)");
    assertThatThrownBy(() -> Replica.builder("a").maxInFlightRequests(0))
        .hasMessage("maxInFlightRequests: 0 (expected: > 0)");
  }

  @Test
  void holdingIsOffUntilAskedForAndThenUsesTheDefaultBounds() {
    AffinityRouter.Builder b = AffinityRouter.builder();
    assertThat(b.settings.maxHeldRequests).isZero();
    b.holdQueue();
    assertThat(b.settings.maxHeldRequests)
        .isEqualTo(AffinityRouter.Builder.DEFAULT_MAX_HELD_REQUESTS);
    assertThat(b.settings.maxHeldBytes).isEqualTo(AffinityRouter.Builder.DEFAULT_MAX_HELD_BYTES);
    assertThat(b.settings.maxHold).isEqualTo(AffinityRouter.Builder.DEFAULT_MAX_HOLD);
    b.noHoldQueue();
    assertThat(b.settings.maxHeldRequests).isZero();
  }

  @Test
  void aSetterWhoseSecondArgumentFailsLeavesTheBuilderAsItWas() {
    AffinityRouter.Builder b = AffinityRouter.builder()
        .storeBackoff(java.time.Duration.ofSeconds(1), java.time.Duration.ofSeconds(2))
        .retryAfter(java.time.Duration.ofSeconds(3), java.time.Duration.ofSeconds(4))
        .holdQueue(10, 1_000, java.time.Duration.ofSeconds(5))
        .bindingStore("memory", java.util.Map.of());
    assertThatThrownBy(() -> b.storeBackoff(java.time.Duration.ofMillis(10),
        java.time.Duration.ofMillis(5)))
        .hasMessage("storeMaxBackoff: PT0.005S (expected: >= storeBackoff PT0.01S)");
    assertThatThrownBy(() -> b.retryAfter(java.time.Duration.ofMillis(10), java.time.Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.holdQueue(20, 2_000, java.time.Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
    java.util.Map<String, String> withNull = new java.util.HashMap<>();
    withNull.put("uri", null);
    assertThatThrownBy(() -> b.bindingStore("redis", withNull))
        .isInstanceOf(NullPointerException.class);
    assertThat(b.settings.storeBackoff).isEqualTo(java.time.Duration.ofSeconds(1));
    assertThat(b.settings.storeMaxBackoff).isEqualTo(java.time.Duration.ofSeconds(2));
    assertThat(b.settings.atLimitRetryAfter).isEqualTo(java.time.Duration.ofSeconds(3));
    assertThat(b.settings.maxHeldRequests).isEqualTo(10);
    assertThat(b.settings.maxHeldBytes).isEqualTo(1_000);
    assertThat(b.settings.storeProvider).isEqualTo("memory");

    Replica.Builder r = Replica.builder("r").model("a", io.affinityrouter.ModelState.ACTIVE);
    java.util.Map<String, io.affinityrouter.ModelState> bad = new java.util.LinkedHashMap<>();
    bad.put("b", io.affinityrouter.ModelState.ACTIVE);
    bad.put(" ", io.affinityrouter.ModelState.ACTIVE);
    assertThatThrownBy(() -> r.models(bad)).isInstanceOf(IllegalArgumentException.class);
    assertThat(r.build().models()).as("the old models, not half the new ones")
        .containsOnlyKeys("a");
  }
}
