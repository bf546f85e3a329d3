package io.affinityrouter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

class ValuesTest {
  @Test
  void replicaRoundTripsThroughItsBuilder() {
    Replica r = Replica.builder("a").address("http://a:8000").model("m", ModelState.SLEEPING)
        .health(ReplicaHealth.DRAINING).readySince(Instant.ofEpochSecond(5))
        .load(ReplicaLoad.builder().runningRequests(3).kvUsage(0.5).kvCapacityTokens(1000)
            .kvWrittenTokens(12_345).build())
        .maxInFlightRequests(7).maxInFlightTokens(9000).build();
    assertThat(r.toBuilder().build()).isEqualTo(r).hasSameHashCodeAs(r);
    assertThat(r.modelState("m")).contains(ModelState.SLEEPING);
    assertThat(r.modelState("x")).isEmpty();
    assertThat(Replica.of("b").modelState("anything")).contains(ModelState.ACTIVE);
    assertThat(r.load().kvFreeTokens()).isEqualTo(500);
    assertThat(ReplicaLoad.UNKNOWN.kvFreeTokens()).isEqualTo(-1);
    assertThat(r.load().kvWrittenTokens()).isEqualTo(12_345);
    assertThat(ReplicaLoad.UNKNOWN.kvWrittenTokens()).isEqualTo(-1);
    assertThat(r.load()).isNotEqualTo(r.load().toBuilder().kvWrittenTokens(1).build());
    assertThatThrownBy(() -> ReplicaLoad.builder().kvWrittenTokens(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("kvWrittenTokens: -1 (expected: >= 0)");
    assertThat(r.withHealth(ReplicaHealth.HEALTHY).health()).isEqualTo(ReplicaHealth.HEALTHY);
  }

  @Test
  void replicaIdsAreBounded() {
    assertThatThrownBy(() -> Replica.builder("x".repeat(257)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("id: 257 characters (expected: <= 256)");
  }

  @Test
  void requestsNeverShowTheirPrompt() {
    RoutingRequest r = RoutingRequest.builder().promptText("top secret").sessionId("s").build();
    assertThat(r.toString()).doesNotContain("secret").contains("TEXT/3 tokens");
    assertThatThrownBy(r::promptTokens).isInstanceOf(IllegalStateException.class)
        .hasMessage("prompt is TEXT, not TOKENS");
  }

  @Test
  void tokenPromptsAreCopiedAndReplacedByHashes() {
    int[] tokens = {1, 2, 3};
    RoutingRequest r = RoutingRequest.builder().promptTokens(tokens).model("m").build();
    tokens[0] = 99;
    assertThat(r.promptTokens()).containsExactly(1, 2, 3);
    RoutingRequest h = r.withBlockHashes(new long[] {42});
    assertThat(h.promptKind()).isEqualTo(PromptKind.BLOCK_HASHES);
    assertThat(h.promptTokenCount()).isEqualTo(3);
    assertThat(h.model()).contains("m");
  }

  @Test
  void decisionsAreBuiltOnlyConsistently() {
    assertThatThrownBy(() -> RoutingDecision.notRouted(RoutingReason.BEST_SCORE, Duration.ZERO,
        null)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("reason: BEST_SCORE (expected: a not-routed reason)");
    RoutingDecision d = RoutingDecision.notRouted(RoutingReason.ALL_AT_LIMIT,
        Duration.ofSeconds(1), null);
    assertThat(d.isRouted()).isFalse();
    assertThat(d.explain()).isEqualTo("ALL_AT_LIMIT, retry after 1000 ms");
    assertThatThrownBy(d::lease).isInstanceOf(IllegalStateException.class);
  }
}
