package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * A store that answers later, on its own thread (as Lettuce does): decisions continue there while
 * the calling thread starts its next decision, so the per-thread scratch must not leak into them.
 */
class AsyncStoreTest {
  private final InMemoryBindingStore memory = InMemoryBindingStore.builder().build();
  private final Executor later = CompletableFuture.delayedExecutor(2, TimeUnit.MILLISECONDS);

  private final BindingStore slow = new BindingStore() {
    private <T> CompletionStage<T> late(Supplier<CompletionStage<T>> op) {
      return CompletableFuture.supplyAsync(() -> op.get().toCompletableFuture().join(), later);
    }

    @Override
    public CompletionStage<Binding> getOrClaim(BindingKey k, String c, Duration ttl) {
      return late(() -> memory.getOrClaim(k, c, ttl));
    }

    @Override
    public CompletionStage<Binding> repin(BindingKey k, long g, String r, Duration ttl) {
      return late(() -> memory.repin(k, g, r, ttl));
    }

    @Override
    public CompletionStage<Optional<Binding>> get(BindingKey k) {
      return memory.get(k);
    }

    @Override
    public void close() {}
  };

  @Test
  void pipelinedAsyncDecisionsKeepTheirOwnState() {
    Router router = AffinityRouter.builder().bindingStore(slow).storeTimeout(Duration.ofSeconds(5))
        .build();
    List<Replica> fleet = Prompts.replicas(6);
    Map<String, String> bound = new HashMap<>();
    for (int round = 0; round < 5; round++) {
      List<CompletableFuture<RoutingDecision>> pending = new ArrayList<>();
      for (int s = 0; s < 200; s++) {
        // Different prompt sizes per session: a leaked scratch would mix block counts up.
        pending.add(router.selectAsync(Prompts.session("s" + s, Prompts.tokens(s, 16 * (1 + s % 7))),
            fleet).toCompletableFuture());
      }
      for (int s = 0; s < 200; s++) {
        RoutingDecision d = pending.get(s).join();
        assertThat(d.isDegraded()).isFalse();
        assertThat(d.promptBlocks()).isEqualTo(1 + s % 7);
        String prior = bound.putIfAbsent("s" + s, d.replica().id());
        if (prior != null) {
          assertThat(d.replica().id()).isEqualTo(prior);
          assertThat(d.reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
        }
        d.lease().close();
      }
    }
    RoutingDecision sync = router.select(Prompts.session("s1", Prompts.tokens(1, 32)), fleet);
    assertThat(sync.replica().id()).isEqualTo(bound.get("s1"));
  }
}
