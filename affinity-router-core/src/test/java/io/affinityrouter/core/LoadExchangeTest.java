package io.affinityrouter.core;

import static io.affinityrouter.core.Prompts.anonymous;
import static io.affinityrouter.core.Prompts.tokens;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.spi.LoadExchange;
import io.affinityrouter.spi.RoutingListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Several gateways' routers sharing their queued prefill through a {@link LoadExchange}. */
class LoadExchangeTest {
  private final TestClock clock = new TestClock();
  private final List<Replica> fleet = Prompts.replicas(2);

  private Router router(LoadExchange exchange, String id, RoutingListener... listeners) {
    AffinityRouter.Builder b = AffinityRouter.builder().clock(clock)
        .random(new SplittableRandom(7)).topK(1);
    if (exchange != null) {
      b.loadExchange(exchange, id, Duration.ofMillis(100));
    }
    for (RoutingListener l : listeners) {
      b.addListener(l);
    }
    return b.build();
  }

  /** Gateway A sends a 64k-token prompt; then gateway B routes a short one. */
  private RoutingDecision otherGatewayAfterALongPrompt(LoadExchange shared) {
    Router a = router(shared, "a");
    Router b = router(shared, "b");
    b.select(anonymous(tokens(1, 16)), fleet).lease().close(); // b publishes once (nothing queued)
    RoutingDecision longOne = a.select(anonymous(tokens(2, 65_536)), fleet);
    clock.advance(Duration.ofMillis(100));
    a.select(anonymous(tokens(3, 16)), fleet).lease().close(); // a's next exchange publishes it
    clock.advance(Duration.ofMillis(100));
    RoutingDecision d = b.select(anonymous(tokens(4, 2_048)), fleet);
    assertThat(longOne.replica()).isNotNull();
    return d.replica().id().equals(longOne.replica().id()) ? null : d;
  }

  @Test
  void withTheExchangeAnotherGatewayAvoidsTheReplicaWithTheLongQueue() {
    assertThat(otherGatewayAfterALongPrompt(new InMemoryLoadExchange()))
        .as("b went elsewhere").isNotNull();
  }

  @Test
  void withoutItTheOtherGatewayCannotSeeTheQueue() {
    // the same decisions, no exchange: b's own view of both replicas is equal and it takes the
    // busy one (the first of equals), which the test above shows the exchange prevents
    assertThat(otherGatewayAfterALongPrompt(null)).as("b went elsewhere").isNull();
  }

  /** As above, both routers on one binding store and no exchange of their own. */
  private RoutingDecision otherGatewayOnTheSameStore(boolean noLoadExchange) {
    InMemoryBindingStore store = InMemoryBindingStore.builder().clock(clock).build();
    Router[] routers = new Router[2];
    for (int g = 0; g < 2; g++) {
      AffinityRouter.Builder b = AffinityRouter.builder().clock(clock).bindingStore(store)
          .random(new SplittableRandom(7)).topK(1);
      routers[g] = (noLoadExchange ? b.noLoadExchange() : b).build();
    }
    Router a = routers[0];
    Router b = routers[1];
    b.select(anonymous(tokens(1, 16)), fleet).lease().close();
    RoutingDecision longOne = a.select(anonymous(tokens(2, 65_536)), fleet);
    clock.advance(Duration.ofMillis(100));
    a.select(anonymous(tokens(3, 16)), fleet).lease().close();
    clock.advance(Duration.ofMillis(100));
    RoutingDecision d = b.select(anonymous(tokens(4, 2_048)), fleet);
    return d.replica().id().equals(longOne.replica().id()) ? null : d;
  }

  @Test
  void routersOnOneStoreShareTheirQueuesThroughItByDefault() {
    assertThat(store().sharedLoadExchange()).containsInstanceOf(InMemoryLoadExchange.class);
    assertThat(otherGatewayOnTheSameStore(false)).as("b went elsewhere").isNotNull();
  }

  @Test
  void noLoadExchangeTurnsTheStoresExchangeOff() {
    assertThat(otherGatewayOnTheSameStore(true)).as("b went elsewhere").isNull();
  }

  private static InMemoryBindingStore store() {
    return InMemoryBindingStore.builder().build();
  }

  @Test
  void theSharedQueueShowsInTheScoresAndDrains() {
    InMemoryLoadExchange shared = new InMemoryLoadExchange();
    Router a = router(shared, "a");
    Router b = router(shared, "b");
    RoutingDecision longOne = a.select(anonymous(tokens(2, 65_536)), fleet);
    double queued = longOne.scores().prefillSeconds(); // a's estimate of its own prefill there
    clock.advance(Duration.ofMillis(100));
    a.select(anonymous(tokens(3, 16)), fleet).lease().close();
    Replica busy = longOne.replica();
    List<Replica> onlyBusy = List.of(busy);
    RoutingDecision seen = b.select(anonymous(tokens(4, 16)), onlyBusy);
    // published 0 ms ago at a's second decision: a's prefill less the 100 ms since it was queued
    assertThat(seen.scores().queueSeconds()).isGreaterThan(queued - 0.2);
    seen.lease().close();
    clock.advance(Duration.ofMillis(500));
    RoutingDecision drained = b.select(anonymous(tokens(5, 16)), onlyBusy);
    assertThat(drained.scores().queueSeconds())
        .isLessThan(seen.scores().queueSeconds() - 0.4);
  }

  @Test
  void aRouterExchangesAtMostOncePerInterval() {
    AtomicInteger calls = new AtomicInteger();
    LoadExchange counting = new LoadExchange() {
      @Override
      public Map<String, Double> exchange(String routerId, Map<String, Double> queued, long now) {
        calls.incrementAndGet();
        return Map.of();
      }

      @Override
      public void close() {}
    };
    Router r = router(counting, "a");
    for (int i = 0; i < 10; i++) {
      r.select(anonymous(tokens(i, 16)), fleet).lease().close();
    }
    assertThat(calls).hasValue(1);
    clock.advance(Duration.ofMillis(99));
    r.select(anonymous(tokens(20, 16)), fleet).lease().close();
    assertThat(calls).hasValue(1);
    clock.advance(Duration.ofMillis(1));
    r.select(anonymous(tokens(21, 16)), fleet).lease().close();
    assertThat(calls).hasValue(2);
  }

  @Test
  void aFailingExchangeIsReportedAndNeverFailsADecision() {
    List<String> failures = new ArrayList<>();
    LoadExchange broken = new LoadExchange() {
      @Override
      public Map<String, Double> exchange(String routerId, Map<String, Double> queued, long now) {
        throw new IllegalStateException("down");
      }

      @Override
      public void close() {}
    };
    Router r = router(broken, "a", new RoutingListener() {
      @Override
      public void onPluginFailure(String name, Throwable error) {
        failures.add(name + ": " + error.getMessage());
      }
    });
    RoutingDecision d = r.select(anonymous(tokens(1, 16)), fleet);
    assertThat(d.isRouted()).isTrue();
    assertThat(failures).containsExactly("loadExchange: down");
  }

  @Test
  void badSettingsAreRejectedAtTheBuilder() {
    InMemoryLoadExchange e = new InMemoryLoadExchange();
    assertThatThrownBy(() -> AffinityRouter.builder().loadExchange(e, " ", Duration.ofMillis(100)))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("routerId");
    assertThatThrownBy(() -> AffinityRouter.builder().loadExchange(e, "a", Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("loadExchangeInterval");
    assertThatThrownBy(() -> AffinityRouter.builder().loadExchange(null, "a", Duration.ofMillis(1)))
        .isInstanceOf(NullPointerException.class);
  }
}
