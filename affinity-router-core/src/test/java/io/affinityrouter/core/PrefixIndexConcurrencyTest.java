package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Writers evicting and readers matching at once: reads stay exact for a prefix nobody evicts. */
class PrefixIndexConcurrencyTest {
  @Test
  void concurrentRecordsAndMatchesKeepTheBoundAndNeverMisreadAStablePrefix() throws Exception {
    PrefixIndex index = new PrefixIndex(1 << 14);
    long[] stable = PrefixIndexTest.chain(-7, 64);
    index.record(stable, 64, 9, 0);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    CountDownLatch go = new CountDownLatch(1);
    List<Future<Integer>> results = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      int thread = t;
      results.add(pool.submit(() -> {
        go.await();
        SplittableRandom rnd = new SplittableRandom(thread);
        int[] depth = new int[PrefixIndex.MAX_ORDINALS];
        int[] ordinals = new int[PrefixIndex.MAX_ORDINALS];
        int wrong = 0;
        for (int i = 0; i < 3000; i++) {
          if (thread < 2) {
            index.record(PrefixIndexTest.chain(rnd.nextLong(), 64), 64, thread, 0);
            index.record(stable, 64, 9, 64); // keep the stable prefix recently used
          } else {
            int n = index.match(stable, 64, depth, ordinals);
            if (n != 1 || depth[9] < 56) {
              wrong++;
            }
            for (int j = 0; j < n; j++) {
              depth[ordinals[j]] = 0;
            }
          }
        }
        return wrong;
      }));
    }
    go.countDown();
    int wrong = 0;
    for (Future<Integer> f : results) {
      wrong += f.get(60, TimeUnit.SECONDS);
    }
    pool.shutdown();
    assertThat(wrong).isZero();
    assertThat(index.size()).isLessThanOrEqualTo((1 << 14) + 64);
  }
}
