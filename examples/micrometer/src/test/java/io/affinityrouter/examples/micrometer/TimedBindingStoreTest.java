package io.affinityrouter.examples.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.BindingStoreProvider;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/** Store latency, timed around a real in-memory store and a failing one, under a real router. */
class TimedBindingStoreTest {
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  static BindingStore memoryStore() {
    for (BindingStoreProvider p : ServiceLoader.load(BindingStoreProvider.class)) {
      if (p.name().equals("memory")) {
        return p.create(Map.of());
      }
    }
    throw new AssertionError("no memory provider");
  }

  @Test
  void everyClaimIsTimedAsOk() {
    try (TimedBindingStore store = TimedBindingStore.wrap(memoryStore(), registry, true);
        Router router = AffinityRouter.builder().bindingStore(store).build()) {
      for (int i = 0; i < 3; i++) {
        router.select(MicrometerRoutingListenerTest.turn("m", "s" + i),
            List.of(Replica.of("a"), Replica.of("b"))).lease().close();
      }
    }
    assertThat(registry.get(TimedBindingStore.LATENCY).tag("operation", "get_or_claim")
        .tag("outcome", "ok").timer().count()).isEqualTo(3);
    assertThat(registry.get(TimedBindingStore.LATENCY).tag("outcome", "error").timers())
        .allSatisfy(t -> assertThat(t.count()).isZero());
  }

  @Test
  void failuresAreTimedAsErrors() {
    try (TimedBindingStore store = TimedBindingStore.wrap(
            new MicrometerRoutingListenerTest.FailingStore(), registry, true);
        Router router = AffinityRouter.builder().bindingStore(store)
            .storeTimeout(Duration.ofMillis(20)).build()) {
      router.select(MicrometerRoutingListenerTest.turn("m", "s"), List.of(Replica.of("a")))
          .lease().close();
    }
    assertThat(registry.get(TimedBindingStore.LATENCY).tag("operation", "get_or_claim")
        .tag("outcome", "error").timer().count()).isEqualTo(1);
  }
}
