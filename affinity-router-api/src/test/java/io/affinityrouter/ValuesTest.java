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
    RoutingRequest r =
        RoutingRequest.builder().promptTokens(tokens).model("m").retries(2).build();
    tokens[0] = 99;
    assertThat(r.promptTokens()).containsExactly(1, 2, 3);
    RoutingRequest h = r.withBlockHashes(new long[] {42});
    assertThat(h.promptKind()).isEqualTo(PromptKind.BLOCK_HASHES);
    assertThat(h.promptTokenCount()).isEqualTo(3);
    assertThat(h.model()).contains("m");
    assertThat(h.retries()).isEqualTo(2);
    assertThat(RoutingRequest.builder().promptTokens(tokens).build().retries()).isZero();
    assertThatThrownBy(() -> RoutingRequest.builder().retries(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("retries: -1 (expected: >= 0)");
  }

  @Test
  void theSdksRetryCountHeaderIsReadAndAnythingElseIsAFirstSend() {
    RoutingRequest.Builder b = RoutingRequest.builder().promptTokens(new int[] {1});
    assertThat(b.retriesHeader("0").build().retries()).isZero();
    assertThat(b.retriesHeader("2").build().retries()).isEqualTo(2);
    assertThat(b.retriesHeader("123456789").build().retries()).isEqualTo(123_456_789);
    for (String bad : new String[] {null, "", "-1", "1.5", " 1", "1 ", "9999999999", "two"}) {
      assertThat(b.retries(5).retriesHeader(bad).build().retries()).as(bad).isZero();
    }
  }

  @Test
  void decisionsAreBuiltOnlyConsistently() {
    assertThatThrownBy(() -> RoutingDecision.notRouted(RoutingReason.BEST_SCORE, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("reason: BEST_SCORE (expected: a not-routed reason)");
    RoutingDecision d = RoutingDecision.notRouted(RoutingReason.ALL_AT_LIMIT,
        Duration.ofSeconds(1));
    assertThat(d.isRouted()).isFalse();
    assertThat(d.explain()).isEqualTo("ALL_AT_LIMIT, retry after 1000 ms");
    assertThatThrownBy(d::lease).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void routedDecisionsAreBuiltThroughNamedParts() {
    Replica a = Replica.of("a");
    RequestLease lease = new NoLease("a");
    RoutingDecision kept = RoutingDecision.routed(RoutingReason.SESSION_AFFINITY, a, lease)
        .prefixBlocks(3, 4).binding(7, true).build();
    assertThat(kept.replica()).isSameAs(a);
    assertThat(kept.matchedBlocks()).isEqualTo(3);
    assertThat(kept.promptBlocks()).isEqualTo(4);
    assertThat(kept.bindingGeneration()).isEqualTo(7);
    assertThat(kept.isDegraded()).isTrue();
    assertThat(kept.scores()).isSameAs(ScoreBreakdown.NONE);
    assertThat(kept.repinCause()).isEmpty();
    assertThat(kept.previousReplicaId()).isEmpty();

    RoutingDecision moved = RoutingDecision.routed(RoutingReason.SESSION_REPINNED, a, lease)
        .repinnedFrom("b", RepinCause.REPLICA_UNHEALTHY).build();
    assertThat(moved.previousReplicaId()).contains("b");
    assertThat(moved.explain()).startsWith(
        "SESSION_REPINNED -> a (repinned from b: REPLICA_UNHEALTHY)");
    RequestLease other = new NoLease("a");
    RoutingDecision relet = moved.withLease(other);
    assertThat(relet.lease()).isSameAs(other);
    assertThat(relet.repinCause()).contains(RepinCause.REPLICA_UNHEALTHY);
    assertThat(relet.previousReplicaId()).contains("b");

    assertThatThrownBy(() -> RoutingDecision.routed(RoutingReason.SESSION_REPINNED, a, lease)
        .build()).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("reason: SESSION_REPINNED (expected: SESSION_REPINNED exactly when "
            + "repinnedFrom is given)");
    assertThatThrownBy(() -> RoutingDecision.routed(RoutingReason.BEST_SCORE, a, lease)
        .repinnedFrom("b", RepinCause.REPLICA_GONE).build())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> RoutingDecision.routed(RoutingReason.ALL_AT_LIMIT, a, lease))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("reason: ALL_AT_LIMIT (expected: a routed reason)");
    assertThatThrownBy(() -> RoutingDecision.routed(RoutingReason.BEST_SCORE, a, lease)
        .prefixBlocks(5, 4)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("matchedBlocks: 5 (expected: 0..4, the prompt's blocks)");
    assertThatThrownBy(() -> RoutingDecision.routed(RoutingReason.BEST_SCORE, a, lease)
        .binding(-1, false)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("generation: -1 (expected: >= 0)");
  }

  @Test
  void notRoutedDecisionsNameTheWokenReplicaOnlyWhenWaking() {
    RoutingDecision waking = RoutingDecision.modelWaking("r2", Duration.ofSeconds(2));
    assertThat(waking.reason()).isEqualTo(RoutingReason.MODEL_WAKING);
    assertThat(waking.wokenReplicaId()).contains("r2");
    assertThat(waking.explain()).isEqualTo("MODEL_WAKING, retry after 2000 ms, woke r2");
    assertThat(RoutingDecision.notRouted(RoutingReason.NO_REPLICA, Duration.ZERO)
        .wokenReplicaId()).isEmpty();
    assertThatThrownBy(() -> waking.withLease(new NoLease("r2")))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> RoutingDecision.notRouted(RoutingReason.NO_REPLICA,
        Duration.ofMillis(-1))).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("retryAfter: PT-0.001S (expected: >= 0)");
    assertThatThrownBy(() -> RoutingDecision.modelWaking("", Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private record NoLease(String replicaId) implements RequestLease {
    @Override
    public void markFirstToken() {}

    @Override
    public void complete(int outputTokens) {}

    @Override
    public void close() {}

    @Override
    public boolean isClosed() {
      return false;
    }
  }
}
