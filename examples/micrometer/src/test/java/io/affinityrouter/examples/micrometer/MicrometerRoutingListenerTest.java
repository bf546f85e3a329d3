package io.affinityrouter.examples.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.affinityrouter.ModelState;
import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** The listener's meters, fed by a real router's decisions. */
class MicrometerRoutingListenerTest {
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  final MicrometerRoutingListener listener = new MicrometerRoutingListener(registry);

  static RoutingRequest turn(String model, String session) {
    return RoutingRequest.builder().model(model).sessionId(session)
        .promptText("system\nYou are a helpful assistant who answers questions about routing.\n"
            + "user\nHello, tell me how a gateway keeps a conversation on the replica that holds"
            + " its KV cache, and what happens when that replica goes away.\n").build();
  }

  double decisions(String reason, String model) {
    return registry.get(MicrometerRoutingListener.DECISIONS).tag("reason", reason)
        .tag("model", model).counter().count();
  }

  @Test
  void decisionsRepinsMatchedBlocksAndLatency() {
    List<Replica> three = List.of(Replica.of("a"), Replica.of("b"), Replica.of("c"));
    try (Router router = AffinityRouter.builder().addListener(listener).build()) {
      RoutingDecision first = router.select(turn("m", "s1"), three);
      first.lease().close();
      router.select(turn("m", "s1"), three).lease().close();
      List<Replica> without = three.stream().filter(r -> !r.id().equals(first.replica().id()))
          .toList();
      RoutingDecision moved = router.select(turn("m", "s1"), without);
      moved.lease().close();
      assertThat(moved.reason()).isEqualTo(RoutingReason.SESSION_REPINNED);
    }
    assertThat(decisions("session_claimed", "m")).isEqualTo(1);
    assertThat(decisions("session_affinity", "m")).isEqualTo(1);
    assertThat(decisions("session_repinned", "m")).isEqualTo(1);
    assertThat(registry.get(MicrometerRoutingListener.REPINS).tag("cause", "replica_gone")
        .counter().count()).isEqualTo(1);
    assertThat(registry.get(MicrometerRoutingListener.MATCHED_BLOCKS).tag("model", "m")
        .summary().count()).isEqualTo(3);
    // the second turn found the first turn's blocks on the session's replica
    assertThat(registry.get(MicrometerRoutingListener.MATCHED_BLOCKS).tag("model", "m")
        .summary().max()).isPositive();
    assertThat(registry.get(MicrometerRoutingListener.SELECT).tag("routed", "true").timer()
        .count()).isEqualTo(3);
    double prompt = registry.get(MicrometerRoutingListener.PROMPT_TOKENS).tag("model", "m")
        .counter().count();
    double matched = registry.get(MicrometerRoutingListener.MATCHED_TOKENS).tag("model", "m")
        .counter().count();
    assertThat(prompt).isEqualTo(3.0 * turn("m", "s1").promptTokenCount());
    // only the second turn found its prefix: at most a third of all prompt tokens matched
    assertThat(matched).isPositive().isLessThanOrEqualTo(prompt / 3);
  }

  @Test
  void matchedTokensFollowTheRoutersOwnBlockSize() {
    try (Router router = AffinityRouter.builder().tokenBlockSize(32).addListener(listener)
        .build()) {
      List<Replica> fleet = List.of(Replica.builder("a").build());
      RoutingRequest turn = RoutingRequest.builder().model("m").sessionId("s1")
          .promptTokens(java.util.stream.IntStream.range(0, 256).toArray()).build();
      RoutingDecision first = router.select(turn, fleet);
      first.lease().close();
      RoutingDecision second = router.select(turn, fleet);
      second.lease().close();
      double matched = registry.get(MicrometerRoutingListener.MATCHED_TOKENS).tag("model", "m")
          .counter().count();
      int prompt = turn.promptTokenCount();
      assertThat(second.matchedBlocks()).isPositive();
      assertThat(matched).isEqualTo(
          Math.round(prompt * second.scores().cachedFraction()), within(0.5))
          .isGreaterThan(16.0 * second.matchedBlocks()); // 32-token blocks, not 16
    }
  }

  @Test
  void wakeRequestsAndNotRoutedDecisions() {
    Replica sleeping = Replica.builder("z").model("m", ModelState.SLEEPING).build();
    try (Router router = AffinityRouter.builder().addListener(listener).build()) {
      RoutingDecision d = router.select(turn("m", "s"), List.of(sleeping));
      assertThat(d.reason()).isEqualTo(RoutingReason.MODEL_WAKING);
    }
    assertThat(decisions("model_waking", "m")).isEqualTo(1);
    assertThat(registry.get(MicrometerRoutingListener.WAKE_REQUESTS).tag("model", "m").counter()
        .count()).isEqualTo(1);
    assertThat(registry.get(MicrometerRoutingListener.SELECT).tag("routed", "false").timer()
        .count()).isEqualTo(1);
  }

  @Test
  void degradedDecisionsAndStoreFailuresAreCounted() {
    try (Router router = AffinityRouter.builder().bindingStore(new FailingStore())
        .storeTimeout(Duration.ofMillis(20)).addListener(listener).build()) {
      RoutingDecision d = router.select(turn("m", "s"), List.of(Replica.of("a"), Replica.of("b")));
      d.lease().close();
      assertThat(d.isDegraded()).isTrue();
    }
    assertThat(registry.get(MicrometerRoutingListener.DECISIONS).tag("degraded", "true").counter()
        .count()).isEqualTo(1);
    assertThat(registry.get(MicrometerRoutingListener.DEGRADED).tag("model", "m").counter()
        .count()).isEqualTo(1);
    assertThat(registry.get(MicrometerRoutingListener.STORE_FAILURES).counter().count())
        .isPositive();
  }

  @Test
  void modelTagsAreBoundedAgainstClientChosenNames() {
    try (Router router = AffinityRouter.builder().addListener(listener).build()) {
      for (int i = 0; i < MicrometerRoutingListener.MAX_MODEL_TAGS + 20; i++) {
        router.select(turn("model-" + i, "s" + i), List.of(Replica.of("a"))).lease().close();
      }
      router.select(RoutingRequest.builder().promptText("x").build(), List.of(Replica.of("a")))
          .lease().close();
    }
    List<String> models = registry.find(MicrometerRoutingListener.DECISIONS).counters().stream()
        .map(c -> c.getId().getTag("model")).distinct().toList();
    assertThat(models).hasSize(MicrometerRoutingListener.MAX_MODEL_TAGS + 2)
        .contains(MicrometerRoutingListener.OTHER_MODEL, MicrometerRoutingListener.NO_MODEL);
    assertThat(decisions("session_claimed", MicrometerRoutingListener.OTHER_MODEL)).isEqualTo(20);
    assertThat(registry.getMeters()).extracting(Meter::getId)
        .allMatch(id -> id.getName().startsWith("affinity.router."));
  }

  /** A store whose every call fails, as an unreachable one. */
  static final class FailingStore implements BindingStore {
    @Override
    public CompletionStage<Binding> getOrClaim(BindingKey key, String candidate, Duration ttl) {
      return CompletableFuture.failedFuture(new IOException("store down"));
    }

    @Override
    public CompletionStage<Binding> repin(BindingKey key, long expectedGeneration,
        String newReplicaId, Duration ttl) {
      return CompletableFuture.failedFuture(new IOException("store down"));
    }

    @Override
    public CompletionStage<Optional<Binding>> get(BindingKey key) {
      return CompletableFuture.failedFuture(new IOException("store down"));
    }

    @Override
    public void close() {}
  }
}
