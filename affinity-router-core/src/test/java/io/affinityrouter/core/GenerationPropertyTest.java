package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

import io.affinityrouter.core.TestClock;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Generations only increase per key, whatever mix of claims, repins and expiries happens. */
class GenerationPropertyTest {
  @Test
  void generationsOnlyIncrease() {
    qt().withExamples(1000).forAll(longs().all()).checkAssert(seed -> {
      SplittableRandom rnd = new SplittableRandom(seed);
      TestClock clock = new TestClock();
      InMemoryBindingStore store = InMemoryBindingStore.builder().clock(clock).build();
      Duration ttl = Duration.ofSeconds(10);
      Map<BindingKey, Long> seen = new HashMap<>();
      for (int i = 0; i < 60; i++) {
        BindingKey key = new BindingKey("", "", "s" + rnd.nextInt(3));
        long last = seen.getOrDefault(key, 0L);
        Binding b;
        if (rnd.nextBoolean()) {
          b = store.getOrClaim(key, "r" + rnd.nextInt(4), ttl).toCompletableFuture().join();
        } else {
          long view = rnd.nextBoolean() ? last : Math.max(0, last - rnd.nextInt(3));
          b = store.repin(key, view, "r" + rnd.nextInt(4), ttl).toCompletableFuture().join();
        }
        if (b.written()) {
          assertThat(b.generation()).isGreaterThan(last);
        } else {
          assertThat(b.generation()).isGreaterThanOrEqualTo(last);
        }
        seen.put(key, b.generation());
        if (rnd.nextInt(8) == 0) {
          clock.advance(Duration.ofSeconds(rnd.nextInt(25)));
        }
      }
    });
  }
}
