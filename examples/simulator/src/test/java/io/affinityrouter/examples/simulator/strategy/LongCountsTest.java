package io.affinityrouter.examples.simulator.strategy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LongCountsTest {

  @Test
  void countsMatchAMapThroughGrowthAndShrinking() {
    LongCounts counts = new LongCounts();
    Map<Long, Integer> expected = new HashMap<>();
    Set<Long> seen = new HashSet<>();
    SplittableRandom random = new SplittableRandom(42);
    for (int round = 0; round < 3; round++) {
      for (int i = 0; i < 20_000; i++) {
        // few distinct keys, multiples of 1024 included, so probes collide
        long key = random.nextInt(3_000) * (random.nextBoolean() ? 1024L : -7L);
        counts.increment(key);
        expected.merge(key, 1, Integer::sum);
        seen.add(key);
      }
      for (Map.Entry<Long, Integer> e : Map.copyOf(expected).entrySet()) {
        int drop = round == 2 ? e.getValue() : random.nextInt(e.getValue() + 1);
        for (int i = 0; i < drop; i++) {
          counts.decrement(e.getKey());
        }
        expected.compute(e.getKey(), (k, v) -> v - drop == 0 ? null : v - drop);
      }
      assertThat(counts.size()).isEqualTo(expected.size());
      for (long key : seen) {
        assertThat(counts.count(key)).as("key %d", key).isEqualTo(expected.getOrDefault(key, 0));
      }
    }
    assertThat(counts.size()).isZero();
  }

  @Test
  void decrementingAKeyNotHeldFails() {
    LongCounts counts = new LongCounts();
    counts.increment(0);
    counts.decrement(0);
    assertThatThrownBy(() -> counts.decrement(0)).isInstanceOf(IllegalStateException.class)
        .hasMessage("key 0 is not held");
  }
}
