package io.affinityrouter.core;

import static io.affinityrouter.core.Prompts.session;
import static io.affinityrouter.core.Prompts.tokens;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A session this router has never heard of waits for the store longer than one it knows: another
 * router may hold its binding, and a guess would recompute the session's context elsewhere.
 */
class FirstContactTest {
  /** Another gateway's binding, answered only when the test says so. */
  static class LateStore implements BindingStore {
    final InMemoryBindingStore delegate = InMemoryBindingStore.builder().build();
    volatile CompletableFuture<Void> gate = CompletableFuture.completedFuture(null);

    @Override
    public CompletionStage<Binding> getOrClaim(BindingKey key, String candidate, Duration ttl) {
      CompletionStage<Binding> answer = delegate.getOrClaim(key, candidate, ttl);
      return gate.thenCompose(v -> answer);
    }

    @Override
    public CompletionStage<Binding> repin(BindingKey key, long expected, String replica,
        Duration ttl) {
      return delegate.repin(key, expected, replica, ttl);
    }

    @Override
    public CompletionStage<Optional<Binding>> get(BindingKey key) {
      return delegate.get(key);
    }

    @Override
    public void close() {}
  }

  @Test
  void anUnknownSessionWaitsPastTheStoreTimeoutForTheBindingAKnownOneDoesNot() throws Exception {
    LateStore store = new LateStore();
    List<Replica> replicas = Prompts.replicas(4);
    // another gateway bound both sessions to r3
    store.delegate.getOrClaim(new BindingKey("", "", "known"), "r3", Duration.ofHours(1));
    store.delegate.getOrClaim(new BindingKey("", "", "new-here"), "r3", Duration.ofHours(1));
    try (Router router = AffinityRouter.builder().bindingStore(store)
        .storeTimeout(Duration.ofMillis(20)).build()) {
      int[] context = tokens(1, 50_000); // a wrong guess would prefill all of it: a long wait
      router.select(session("known", context), replicas).lease().close(); // answered at once

      store.gate = new CompletableFuture<>(); // the store now answers only when released
      RoutingDecision known = router.selectAsync(session("known", context), replicas)
          .toCompletableFuture().get(30, TimeUnit.SECONDS); // its 20 ms pass
      assertThat(known.reason()).isEqualTo(RoutingReason.DEGRADED_FALLBACK);
      assertThat(known.replica().id()).as("the last binding it heard of").isEqualTo("r3");
      known.lease().close();

      CompletableFuture<RoutingDecision> first =
          router.selectAsync(session("new-here", context), replicas).toCompletableFuture();
      Thread.sleep(100); // five store timeouts
      assertThat(first).as("still waiting for the store").isNotDone();
      store.gate.complete(null);
      RoutingDecision d = first.get(30, TimeUnit.SECONDS);
      assertThat(d.reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
      assertThat(d.replica().id()).isEqualTo("r3");
      d.lease().close();
    }
  }

  @Test
  void lateAnswersKeepTheBreakerClosedSoTheStoreIsStillAsked() throws Exception {
    java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
    LateStore store = new LateStore() {
      @Override
      public CompletionStage<Binding> getOrClaim(BindingKey key, String candidate, Duration ttl) {
        calls.incrementAndGet();
        return super.getOrClaim(key, candidate, ttl);
      }
    };
    List<Replica> replicas = Prompts.replicas(4);
    try (Router router = AffinityRouter.builder().bindingStore(store)
        .storeTimeout(Duration.ofMillis(20)).build()) {
      int sessions = 3 * StoreGuard.WINDOW_FAILURES;
      for (int s = 0; s < sessions; s++) { // known to this router: 20 ms waits
        router.select(session("s" + s, tokens(s, 64)), replicas).lease().close();
      }
      for (int s = 0; s < sessions; s++) {
        store.gate = new CompletableFuture<>();
        RoutingDecision d = router.selectAsync(session("s" + s, tokens(s, 64)), replicas)
            .toCompletableFuture().get(30, TimeUnit.SECONDS);
        assertThat(d.reason()).isEqualTo(RoutingReason.DEGRADED_FALLBACK);
        d.lease().close();
        store.gate.complete(null); // the answer comes, late
      }
      assertThat(calls.get()).as("no decision skipped the store").isEqualTo(2 * sessions);
    }
  }

  @Test
  void theWaitGrowsWithThePromptFromAFloorToACap() {
    CostModel costModel = new CostModel(AffinityRouter.Builder.DEFAULT_ENGINE_PROFILE);
    StoreClient client = new StoreClient(InMemoryBindingStore.builder().build(),
        Duration.ofHours(1), Duration.ofMillis(50), new StoreGuard(java.time.InstantSource.system(),
            500, 10_000), new Listeners(List.of()), costModel);
    long floor = StoreClient.FIRST_CONTACT_FLOOR_MILLIS * 1_000_000L;
    assertThat(client.firstContactNanos(0)).isEqualTo(floor);
    assertThat(client.firstContactNanos(8_000)).isGreaterThan(floor)
        .isEqualTo(floor + (long) (costModel.prefillSeconds(8_000, 0, 1.0) * 1e9));
    assertThat(client.firstContactNanos(1_000_000))
        .isEqualTo(StoreClient.FIRST_CONTACT_MAX_MILLIS * 1_000_000L);
    StoreClient patient = new StoreClient(InMemoryBindingStore.builder().build(),
        Duration.ofHours(1), Duration.ofSeconds(5), new StoreGuard(java.time.InstantSource.system(),
            500, 10_000), new Listeners(List.of()), costModel);
    assertThat(patient.firstContactNanos(0)).as("never shorter than the store timeout")
        .isEqualTo(Duration.ofSeconds(5).toNanos());
  }
}
