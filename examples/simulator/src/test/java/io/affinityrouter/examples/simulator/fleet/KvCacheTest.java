package io.affinityrouter.examples.simulator.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class KvCacheTest {
  private static final int[] ONE = {1};

  /** Admits, publishes and releases a one-segment request of {@code blocks} blocks. */
  private static void runToCompletion(KvCache cache, long key, int blocks) {
    long[] keys = {key};
    int[] segs = {blocks};
    int m = cache.admit(keys, segs, 0);
    assertThat(m).isGreaterThanOrEqualTo(0);
    cache.publish(keys, segs, m);
    cache.release(keys, 1, 0);
  }

  @Test
  void evictsLeastRecentlyUsedFirst() {
    KvCache cache = new KvCache(3, true);
    runToCompletion(cache, 1, 1);
    runToCompletion(cache, 2, 1);
    runToCompletion(cache, 3, 1);
    // touch 1 again: it becomes the most recently used
    runToCompletion(cache, 1, 1);
    runToCompletion(cache, 4, 1);
    assertThat(cache.contains(2)).as("least recently used evicted").isFalse();
    assertThat(cache.contains(1)).isTrue();
    assertThat(cache.contains(3)).isTrue();
    assertThat(cache.contains(4)).isTrue();
    assertThat(cache.evictedBlocks()).isEqualTo(1);
  }

  @Test
  void releasesTailSegmentsFirstSoTheyAreEvictedBeforeTheHead() {
    KvCache cache = new KvCache(3, true);
    long[] keys = {10, 11, 12};
    int[] segs = {1, 1, 1};
    cache.publish(keys, segs, cache.admit(keys, segs, 0));
    cache.release(keys, 3, 0);
    runToCompletion(cache, 99, 1);
    assertThat(cache.contains(12)).as("tail evicted first").isFalse();
    assertThat(cache.contains(10)).isTrue();
    assertThat(cache.contains(11)).isTrue();
  }

  @Test
  void pinnedSegmentsAreNeverEvictedAndARequestThatDoesNotFitWaits() {
    KvCache cache = new KvCache(4, true);
    long[] running = {1, 2, 3};
    int[] segs = {1, 1, 1};
    cache.publish(running, segs, cache.admit(running, segs, 0));
    assertThat(cache.isPinned(1)).isTrue();
    long[] other = {7, 8};
    assertThat(cache.admit(other, new int[] {1, 1}, 0)).as("does not fit: waits").isEqualTo(-1);
    assertThat(cache.contains(1) && cache.contains(2) && cache.contains(3)).isTrue();
    cache.release(running, 3, 0);
    assertThat(cache.admit(other, new int[] {1, 1}, 0)).isZero();
    assertThat(cache.contains(3)).as("evicted once unpinned (tail first)").isFalse();
    assertThat(cache.contains(1)).isTrue();
  }

  @Test
  void matchesOnlyALeadingChainAndPinsTheMatchedPrefix() {
    KvCache cache = new KvCache(10, true);
    runToCompletion(cache, 5, 2);
    long[] keys = {5, 6};
    int m = cache.admit(keys, new int[] {2, 3}, 1);
    assertThat(m).isEqualTo(1);
    assertThat(cache.isPinned(5)).isTrue();
    assertThat(cache.usedBlocks()).isEqualTo(2 + 3 + 1);
    assertThat(cache.matchedSegments(new long[] {6})).as("not a prefix").isZero();
  }

  @Test
  void reservationsCountAgainstCapacityUntilReleased() {
    KvCache cache = new KvCache(5, true);
    long[] a = {1};
    assertThat(cache.admit(a, new int[] {2}, 3)).isZero();
    assertThat(cache.admit(new long[] {2}, ONE, 0)).isEqualTo(-1);
    cache.publish(a, new int[] {2}, 0);
    cache.release(a, 1, 3);
    assertThat(cache.usedBlocks()).isEqualTo(2);
    assertThat(cache.activeBlocks()).isZero();
  }

  @Test
  void growTakesFreeBlocksThenEvictsUnpinnedSegmentsButNeverPinnedOnes() {
    KvCache cache = new KvCache(6, true);
    runToCompletion(cache, 1, 2); // cached, unpinned
    long[] keys = {2};
    int[] segs = {2};
    cache.publish(keys, segs, cache.admit(keys, segs, 0)); // pinned while it runs
    assertThat(cache.grow(2)).as("free blocks").isTrue();
    assertThat(cache.contains(1)).isTrue();
    assertThat(cache.grow(2)).as("by evicting the unpinned segment").isTrue();
    assertThat(cache.contains(1)).isFalse();
    assertThat(cache.grow(1)).as("only pinned blocks and reservations left").isFalse();
    assertThat(cache.usedBlocks()).isEqualTo(6);
    cache.release(keys, 1, 4);
    assertThat(cache.usedBlocks()).isEqualTo(cache.cachedBlocks()).isEqualTo(2);
    assertThat(cache.activeBlocks()).isZero();
  }

  @Test
  void withoutPrefixCachingNothingMatchesAndNothingStays() {
    KvCache cache = new KvCache(10, false);
    long[] keys = {1};
    int[] segs = {2};
    assertThat(cache.admit(keys, segs, 1)).isZero();
    cache.publish(keys, segs, 0);
    assertThat(cache.usedBlocks()).as("still reserved while running").isEqualTo(3);
    // nothing was cached: the request releases its whole reservation
    cache.release(keys, 0, 3);
    assertThat(cache.matchedSegments(new long[] {1})).isZero();
    assertThat(cache.usedBlocks()).isZero();
  }

  @Test
  void answerSegmentsAreCachedUnpinned() {
    KvCache cache = new KvCache(2, true);
    cache.insertUnpinned(42, 1);
    assertThat(cache.contains(42)).isTrue();
    assertThat(cache.isPinned(42)).isFalse();
    cache.insertUnpinned(43, 5);
    assertThat(cache.contains(43)).as("does not fit").isFalse();
  }

  @Test
  void refusesANonPositiveCapacity() {
    assertThatThrownBy(() -> new KvCache(0, true))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("capacityBlocks: 0 (expected: > 0)");
  }
}
