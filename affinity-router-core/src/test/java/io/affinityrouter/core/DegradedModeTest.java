package io.affinityrouter.core;

import static io.affinityrouter.core.Prompts.replicas;
import static io.affinityrouter.core.Prompts.session;
import static io.affinityrouter.core.Prompts.tokens;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.RepinCause;
import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.RoutingListener;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class DegradedModeTest {
  private final TestClock clock = new TestClock();
  private final InMemoryBindingStore memory = InMemoryBindingStore.builder().clock(clock).build();
  private final ControllableStore store = new ControllableStore(memory);

  private Router router(RoutingListener... listeners) {
    AffinityRouter.Builder b = AffinityRouter.builder().clock(clock).bindingStore(store)
        .storeTimeout(Duration.ofMillis(30));
    for (RoutingListener l : listeners) {
      b.addListener(l);
    }
    return b.build();
  }

  @Test
  void failingStoreDegradesToTheSameReplicaOnEveryGateway() {
    store.mode = ControllableStore.Mode.FAIL;
    AtomicInteger failures = new AtomicInteger();
    RoutingListener counting = new RoutingListener() {
      @Override
      public void onStoreFailure(Throwable cause) {
        failures.incrementAndGet();
      }
    };
    Router g1 = router(counting);
    Router g2 = router();
    List<Replica> fleet = replicas(8);
    for (int s = 0; s < 50; s++) {
      RoutingDecision a = g1.select(session("s" + s, tokens(s, 300)), fleet);
      RoutingDecision b = g2.select(session("s" + s, tokens(s, 300)), fleet);
      assertThat(a.reason()).isEqualTo(RoutingReason.DEGRADED_FALLBACK);
      assertThat(a.isDegraded()).isTrue();
      assertThat(b.replica()).isEqualTo(a.replica());
      a.lease().close();
      b.lease().close();
    }
    // the breaker opened once half of the window failed, not on the first
    assertThat(failures.get()).isEqualTo(StoreGuard.WINDOW_FAILURES);
  }

  @Test
  void hangingStoreCostsSomeTimeoutsThenNothingUntilTheProbe() throws Exception {
    store.mode = ControllableStore.Mode.HANG;
    Router router = router();
    List<Replica> fleet = replicas(4);
    for (int i = 0; i < StoreGuard.WINDOW_FAILURES; i++) {
      RoutingDecision d = router.select(session("a" + i, tokens(i, 100)), fleet);
      assertThat(d.isDegraded()).isTrue();
      d.lease().close();
    }
    assertThat(store.calls.get()).isEqualTo(StoreGuard.WINDOW_FAILURES);
    for (int i = 0; i < 20; i++) {
      RoutingDecision d = router.select(session("b" + i, tokens(i, 100)), fleet);
      assertThat(d.isDegraded()).isTrue();
      d.lease().close();
    }
    // breaker open: no call, no wait
    assertThat(store.calls.get()).isEqualTo(StoreGuard.WINDOW_FAILURES);
    // After the back-off one decision probes in the background; it still routes degraded at once.
    clock.advance(AffinityRouter.Builder.DEFAULT_STORE_BACKOFF);
    store.mode = ControllableStore.Mode.UP;
    RoutingDecision probe = router.select(session("c", tokens(3, 100)), fleet);
    assertThat(probe.isDegraded()).isTrue();
    assertThat(store.calls.get()).isEqualTo(StoreGuard.WINDOW_FAILURES + 1);
    RoutingDecision healed = router.select(session("d", tokens(4, 100)), fleet);
    assertThat(healed.isDegraded()).isFalse();
    assertThat(healed.reason()).isEqualTo(RoutingReason.SESSION_CLAIMED);
  }

  @Test
  void aFirstTurnWhoseClaimTimesOutGoesToTheClaimedCandidate() {
    store.mode = ControllableStore.Mode.HANG_AFTER_WRITE;
    Router router = router();
    List<Replica> fleet = replicas(6);
    for (int s = 0; s < StoreGuard.WINDOW_FAILURES - 1; s++) {
      RoutingDecision d = router.select(session("s" + s, tokens(s, 200)), fleet);
      assertThat(d.isDegraded()).isTrue();
      // the claim landed: the decision went where the store now points
      assertThat(d.replica().id()).isEqualTo(memory.get(new BindingKey("", "", "s" + s))
          .toCompletableFuture().join().orElseThrow().replicaId());
      d.lease().close();
    }
  }

  @Test
  void selectAsyncNeverCompletesExceptionallyWhenTheStoreHangs() throws Exception {
    store.mode = ControllableStore.Mode.HANG;
    Router router = router();
    CompletionStage<RoutingDecision> stage =
        router.selectAsync(session("a", tokens(1, 100)), replicas(3));
    RoutingDecision d = stage.toCompletableFuture().get(5, TimeUnit.SECONDS);
    assertThat(d.reason()).isEqualTo(RoutingReason.DEGRADED_FALLBACK);
    assertThat(d.lease().isClosed()).isFalse();
  }

  @Test
  void duringAnOutageSessionsKeepTheReplicaTheStoreLastConfirmed() {
    Router router = router();
    List<Replica> fleet = replicas(8);
    for (int s = 0; s < 40; s++) {
      router.select(session("s" + s, tokens(s, 200)), fleet).lease().close();
    }
    store.mode = ControllableStore.Mode.FAIL;
    for (int s = 0; s < 40; s++) {
      RoutingDecision d = router.select(session("s" + s, tokens(s, 200)), fleet);
      assertThat(d.isDegraded()).isTrue();
      assertThat(d.replica().id()).isEqualTo(memory.get(new BindingKey("", "", "s" + s))
          .toCompletableFuture().join().orElseThrow().replicaId());
      d.lease().close();
    }
  }

  @Test
  void sessionsRoutedElsewhereDuringAnOutageAreReconciledWhenTheStoreReturns() {
    Router router = router();
    List<Replica> fleet = replicas(8);
    for (int s = 0; s < 40; s++) {
      String id = "s" + s;
      store.mode = ControllableStore.Mode.UP;
      RoutingDecision bound = router.select(session(id, tokens(s, 200)), fleet);
      bound.lease().close();
      // The store goes down and, meanwhile, the bound replica fails its health check.
      store.mode = ControllableStore.Mode.FAIL;
      List<Replica> without = new java.util.ArrayList<>(fleet);
      without.set(fleet.indexOf(bound.replica()),
          bound.replica().withHealth(io.affinityrouter.ReplicaHealth.UNHEALTHY));
      RoutingDecision degraded = router.select(session(id, tokens(s, 200)), without);
      degraded.lease().close();
      assertThat(degraded.replica()).isNotEqualTo(bound.replica());
      // The store and the replica return; after the back-off a probe closes the breaker.
      store.mode = ControllableStore.Mode.UP;
      clock.advance(Duration.ofSeconds(30));
      router.select(session("probe" + s, tokens(1000 + s, 50)), fleet).lease().close();
      RoutingDecision back = router.select(session(id, tokens(s, 200)), fleet);
      back.lease().close();
      assertThat(back.isDegraded()).isFalse();
      assertThat(back.replica()).isEqualTo(degraded.replica());
      assertThat(back.repinCause()).contains(RepinCause.RECONCILED);
      BindingKey key = new BindingKey("", "", id);
      assertThat(memory.get(key).toCompletableFuture().join().orElseThrow().replicaId())
          .isEqualTo(degraded.replica().id());
    }
  }
}
