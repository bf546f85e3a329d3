package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** Bisection matching agrees with a block-by-block scan whenever holder sets are prefix-closed. */
class PrefixIndexPropertyTest {
  @Test
  void bisectionFindsTheSameDepthsAsALinearScan() {
    qt().withExamples(1000).forAll(longs().all(), integers().between(1, 600))
        .checkAssert((seed, n) -> {
          SplittableRandom rnd = new SplittableRandom(seed);
          PrefixIndex index = new PrefixIndex(1 << 14);
          long[] prompt = PrefixIndexTest.chain(seed, n);
          int replicas = 1 + rnd.nextInt(4);
          int[] truth = new int[replicas];
          for (int r = 0; r < replicas; r++) {
            truth[r] = rnd.nextInt(n + 1);
            if (truth[r] > 0) {
              index.record(prompt, truth[r], r, 0);
            }
          }
          int[] depth = new int[PrefixIndex.MAX_ORDINALS];
          int[] ordinals = new int[PrefixIndex.MAX_ORDINALS];
          int count = index.match(prompt, n, depth, ordinals);
          assertThat(count).isEqualTo((int) Arrays.stream(truth).filter(d -> d > 0).count());
          for (int r = 0; r < replicas; r++) {
            assertThat(depth[r]).as("replica %d", r).isEqualTo(truth[r]);
          }
        });
  }
}
