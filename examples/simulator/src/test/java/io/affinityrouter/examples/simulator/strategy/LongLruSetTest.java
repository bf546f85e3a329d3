package io.affinityrouter.examples.simulator.strategy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class LongLruSetTest {

  @Test
  void theLeastRecentlyAddedKeyGoesFirst() {
    LongLruSet set = new LongLruSet(3);
    set.add(1);
    set.add(2);
    set.add(3);
    set.add(1);
    set.add(4);
    assertThat(set.contains(2)).isFalse();
    assertThat(set.contains(1) && set.contains(3) && set.contains(4)).isTrue();
    assertThat(set.size()).isEqualTo(3);
  }

  @Test
  void aLookupDoesNotMakeAKeyRecent() {
    LongLruSet set = new LongLruSet(2);
    set.add(1);
    set.add(2);
    assertThat(set.contains(1)).isTrue();
    set.add(3);
    assertThat(set.contains(1)).isFalse();
    assertThat(set.contains(2)).isTrue();
  }

  @Test
  void agreesWithALinkedHashMapInAccessOrder() {
    for (int capacity : new int[] {1, 7, 100, 1000}) {
      LongLruSet set = new LongLruSet(capacity);
      Map<Long, Boolean> reference = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
          return size() > capacity;
        }
      };
      SplittableRandom random = new SplittableRandom(capacity);
      for (int op = 0; op < 200_000; op++) {
        // few distinct keys so keys come back, some far apart so probe runs wrap and interleave
        long key = random.nextInt(3 * capacity) * (random.nextBoolean() ? 1L : 1L << 40);
        if (random.nextInt(3) == 0) {
          assertThat(set.contains(key)).as("op %d, key %d", op, key)
              .isEqualTo(reference.containsKey(key));
        } else {
          set.add(key);
          reference.put(key, Boolean.TRUE);
        }
      }
      assertThat(set.size()).isEqualTo(reference.size());
      for (long key : reference.keySet()) {
        assertThat(set.contains(key)).isTrue();
      }
    }
  }

  @Test
  void rejectsANonPositiveCapacity() {
    assertThatThrownBy(() -> new LongLruSet(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("capacity: 0 (expected: > 0)");
  }
}
