package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class PrefixIndexTest {
  private final int[] depth = new int[PrefixIndex.MAX_ORDINALS];
  private final int[] ordinals = new int[PrefixIndex.MAX_ORDINALS];

  static long[] chain(long seed, int n) {
    SplittableRandom r = new SplittableRandom(seed);
    long[] h = new long[n];
    for (int i = 0; i < n; i++) {
      h[i] = r.nextLong() | 1;
    }
    return h;
  }

  private int match(PrefixIndex index, long[] hashes, int n) {
    java.util.Arrays.fill(depth, 0);
    return index.match(hashes, n, depth, ordinals);
  }

  @Test
  void findsEachReplicasDepth() {
    PrefixIndex index = new PrefixIndex(1 << 16);
    long[] prompt = chain(1, 500);
    index.record(prompt, 100, 0, 0);
    index.record(prompt, 333, 1, 0);
    index.record(prompt, 500, 2, 0);
    index.record(chain(2, 50), 50, 3, 0); // another prompt
    assertThat(match(index, prompt, 500)).isEqualTo(3);
    assertThat(depth[0]).isEqualTo(100);
    assertThat(depth[1]).isEqualTo(333);
    assertThat(depth[2]).isEqualTo(500);
    assertThat(depth[3]).isZero();
    assertThat(match(index, prompt, 50)).isEqualTo(3);
    assertThat(depth[0]).isEqualTo(50);
  }

  @Test
  void theBoundHoldsAfterTenTimesAsManyInsertions() {
    PrefixIndex index = new PrefixIndex(10_000);
    for (int p = 0; p < 100; p++) {
      index.record(chain(p, 1000), 1000, p % 8, 0);
    }
    assertThat(index.size()).isLessThanOrEqualTo(10_000 + 64); // per-segment rounding
    assertThat(index.size()).isGreaterThan(9_000);
  }

  @Test
  void recentlyUsedPrefixesSurviveEviction() {
    long[] now = {0};
    PrefixIndex index = new PrefixIndex(4096, () -> now[0]);
    long[] hot = chain(-1, 64);
    for (int p = 0; p < 200; p++) {
      now[0] += PrefixIndex.STAMP_MILLIS;
      index.record(hot, 64, 0, 64); // touched on every decision (sampled refresh)
      index.record(hot, 64, 0, 0); // and fully re-recorded now and then
      index.record(chain(p, 100), 100, 1, 0);
    }
    assertThat(match(index, hot, 64)).isEqualTo(1);
    assertThat(depth[0]).isGreaterThan(56);
    int alive = 0;
    for (int p = 0; p < 10; p++) {
      alive += match(index, chain(p, 100), 100);
    }
    assertThat(alive).isZero(); // the oldest cold prompts went first
  }

  @Test
  void agesCountFromTheLastRecordOfABlock() {
    long[] now = {1_000_000};
    PrefixIndex index = new PrefixIndex(4096, () -> now[0]);
    long[] p = chain(3, 16);
    index.record(p, 16, 0, 0);
    now[0] += 10_000;
    assertThat(index.ageMillis(p[15], now[0])).isEqualTo(10_000);
    index.record(p, 16, 0, 16); // refreshes the first block and 1, 2, 4, 8 before the depth
    assertThat(index.ageMillis(p[15], now[0])).isZero();
    assertThat(index.ageMillis(p[8], now[0])).isZero();
    assertThat(index.ageMillis(p[12], now[0])).isZero();
    assertThat(index.ageMillis(p[0], now[0])).isZero();
    assertThat(index.ageMillis(p[10], now[0])).isEqualTo(10_000); // not in the sample
    assertThat(index.ageMillis(chain(4, 1)[0], now[0])).isEqualTo(-1);
    now[0] += 60;
    assertThat(index.ageMillis(p[15], now[0])).isLessThanOrEqualTo(PrefixIndex.STAMP_MILLIS);
  }

  @Test
  void aRecentShorterPromptVouchesForTheSharedPartOfAnOldLongerOne() {
    long[] now = {0};
    PrefixIndex index = new PrefixIndex(1 << 14, () -> now[0]);
    long[] longer = chain(9, 1000);
    index.record(longer, 1000, 0, 0);
    now[0] += 60_000;
    assertThat(index.freshDepth(longer, 1000, 30_000, now[0], 0)).isZero(); // all of it is old
    // A prompt sharing its first 700 blocks is routed there again: the engine touched those.
    index.record(longer, 700, 0, 700);
    int fresh = index.freshDepth(longer, 1000, 30_000, now[0], 0);
    assertThat(fresh).isBetween(350, 700); // within a factor of two, never beyond what was used
    assertThat(index.freshDepth(longer, 1000, 90_000, now[0], 0)).isEqualTo(1000);
    assertThat(index.freshDepth(longer, 0, 90_000, now[0], 0)).isZero();
  }

  @Test
  void aLongPrefixWithEvictedMiddleBlocksStillMatchesInFull() {
    PrefixIndex index = new PrefixIndex(1 << 14);
    long[] turn = chain(11, 1200);
    index.record(turn, 1000, 0, 0);
    // The index evicted every block of the first 1000 except the ones each record refreshes
    // (999 rounded down to multiples of 1, 2, 4, ...): its LRU keeps those, not the rest.
    java.util.Set<Integer> sample = new java.util.HashSet<>();
    for (int level = 0; level < 11; level++) {
      sample.add((999 >>> level) << level);
    }
    for (int p = 0; p < 1000; p++) {
      if (!sample.contains(p)) {
        index.remove(turn[p], 0);
      }
    }
    // The session's next turn extends the prompt: bisecting at aligned positions probes only the
    // surviving blocks, so the whole 1000-block context is found (a midpoint at 599 would cut it).
    assertThat(match(index, turn, 1200)).isEqualTo(1);
    assertThat(depth[0]).isEqualTo(1000);
  }

  @Test
  void mostAlignedIsThePositionWithTheMostTrailingZeros() {
    for (int x = 1; x <= 300; x++) {
      for (int y = x; y <= 300; y++) {
        int best = x;
        for (int v = x; v <= y; v++) {
          if (Integer.numberOfTrailingZeros(v) > Integer.numberOfTrailingZeros(best)) {
            best = v;
          }
        }
        assertThat(PrefixIndex.mostAligned(x, y)).as("[%d, %d]", x, y).isEqualTo(best);
      }
    }
    assertThat(PrefixIndex.mostAligned(1, Integer.MAX_VALUE - 1)).isEqualTo(1 << 30);
  }

  @Test
  void blocksTheEnginesEventsReportedNeverAgeAndRecordsKeepThemSo() {
    long[] now = {5_000_000};
    PrefixIndex index = new PrefixIndex(1 << 14, () -> now[0]);
    long[] p = chain(31, 64);
    for (long h : p) {
      index.add(h, 0); // replica 0's engine reported them
    }
    index.record(p, 64, 1, 0); // replica 1 only by the router's own decision
    index.record(p, 64, 0, 64); // a decision for replica 0 refreshes, and keeps, its exact copy
    now[0] += 3_600_000;
    assertThat(index.freshDepth(p, 64, 30_000, now[0], 0)).isEqualTo(64);
    assertThat(index.freshDepth(p, 64, 30_000, now[0], 1)).isZero();
    index.add(p[63], 2); // other holders come and go; replica 0's copy stays exact
    index.remove(p[63], 2);
    assertThat(index.freshDepth(p, 64, 30_000, now[0], 0)).isEqualTo(64);
    index.remove(p[63], 0); // until the engine removes it: the block before still vouches
    assertThat(index.freshDepth(p, 64, 30_000, now[0], 0)).isEqualTo(63);
  }

  @Test
  void eachHolderKeepsItsOwnRecordTime() {
    long[] now = {5_000_000};
    PrefixIndex index = new PrefixIndex(1 << 14, () -> now[0]);
    long[] p = chain(21, 64);
    index.record(p, 64, 0, 0);
    now[0] += 60_000;
    index.record(p, 64, 1, 0); // another replica records the same prefix a minute later
    assertThat(index.ageMillis(p[63], now[0])).isZero(); // the block's newest record
    assertThat(index.ageMillis(p[63], 1, now[0])).isZero();
    assertThat(index.ageMillis(p[63], 0, now[0])).isEqualTo(60_000); // replica 0's own record
    assertThat(index.ageMillis(p[63], 2, now[0])).isEqualTo(-1); // not a holder
    // Replica 1's fresh copy does not vouch for replica 0's old one.
    assertThat(index.freshDepth(p, 64, 30_000, now[0], 1)).isEqualTo(64);
    assertThat(index.freshDepth(p, 64, 30_000, now[0], 0)).isZero();
    now[0] += 10_000;
    index.record(p, 64, 0, 64); // replica 0 reuses it: its sample is fresh again
    assertThat(index.freshDepth(p, 64, 30_000, now[0], 0)).isEqualTo(64);
    assertThat(index.ageMillis(p[63], 1, now[0])).isEqualTo(10_000);

    // Times follow their holders through removals and through a full set.
    long b = p[0];
    index.add(b, 2);
    now[0] += 5_000;
    index.add(b, 3);
    index.remove(b, 3); // the most recent goes: replica 2 is the most recent again
    assertThat(index.ageMillis(b, 2, now[0])).isEqualTo(5_000);
    assertThat(index.ageMillis(b, now[0])).isEqualTo(5_000);
    assertThat(index.ageMillis(b, 1, now[0])).isEqualTo(15_000);
    index.remove(b, 1); // one in the middle
    assertThat(index.ageMillis(b, 0, now[0])).isEqualTo(5_000);
    assertThat(index.ageMillis(b, 2, now[0])).isEqualTo(5_000);
    now[0] += 1_000;
    index.add(b, 4);
    index.add(b, 5);
    index.add(b, 6); // five recorded: the least recent (0) is dropped
    assertThat(index.holds(b, 0)).isFalse();
    assertThat(index.ageMillis(b, 2, now[0])).isEqualTo(6_000);
    assertThat(index.ageMillis(b, 6, now[0])).isZero();

    // A holder whose record lags the newest by more than 16 bits of seconds is dropped, not
    // mistaken for a recent one.
    long c = chain(22, 1)[0];
    index.add(c, 7);
    now[0] += (PrefixIndex.MAX_HOLDER_LAG_SECONDS + 10) * 1000L;
    index.add(c, 8);
    assertThat(index.holds(c, 7)).isFalse();
    assertThat(index.ageMillis(c, 8, now[0])).isZero();
  }

  @Test
  void aBlockKeepsItsFourMostRecentHolders() {
    PrefixIndex index = new PrefixIndex(4096);
    long[] p = chain(5, 10);
    for (int r = 0; r < 6; r++) {
      index.record(p, 10, r, 0);
    }
    assertThat(match(index, p, 10)).isEqualTo(4);
    assertThat(depth[0]).isZero();
    assertThat(depth[1]).isZero();
    assertThat(depth[2]).isEqualTo(10);
    assertThat(depth[5]).isEqualTo(10);
  }

  @Test
  void removalsAreExact() {
    PrefixIndex index = new PrefixIndex(4096);
    long[] p = chain(6, 20);
    index.record(p, 20, 0, 0);
    index.record(p, 20, 1, 0);
    for (int i = 10; i < 20; i++) {
      index.remove(p[i], 0);
    }
    assertThat(match(index, p, 20)).isEqualTo(2);
    assertThat(depth[0]).isEqualTo(10);
    assertThat(depth[1]).isEqualTo(20);
    index.removeAll(1);
    assertThat(match(index, p, 20)).isEqualTo(1);
    assertThat(index.holds(p[0], 1)).isFalse();
    assertThat(index.size()).isEqualTo(10);
  }

  @Test
  void badArgumentsAreRefused() {
    assertThatThrownBy(() -> new PrefixIndex(10))
        .hasMessageStartingWith("maxEntries: 10 (expected: 1024..");
    PrefixIndex index = new PrefixIndex(4096);
    assertThatThrownBy(() -> index.add(1, PrefixIndex.MAX_ORDINALS))
        .hasMessage("ordinal: 4095 (expected: 0..4093)");
  }
}
