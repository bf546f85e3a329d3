package io.affinityrouter.examples.simulator.fleet;

import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class KvCachePropertyTest {

  /**
   * Random admissions and releases of chained prompts: usage never exceeds capacity, and no
   * segment of a running request is ever evicted.
   */
  @Test
  void neverOverCapacityAndNeverEvictsRunningRequests() {
    qt().withExamples(200).forAll(lists().of(integers().between(0, 999)).ofSizeBetween(1, 200))
        .checkAssert(ops -> {
          KvCache cache = new KvCache(40, true);
          List<long[]> running = new ArrayList<>();
          for (int op : ops) {
            if (op % 3 == 0 && !running.isEmpty()) {
              long[] keys = running.remove(op % running.size());
              cache.release(keys, keys.length, 1);
            } else {
              int length = 1 + op % 5;
              long[] keys = new long[length];
              int[] segs = new int[length];
              for (int i = 0; i < length; i++) {
                keys[i] = (op % 7) * 100 + i;
                segs[i] = 1 + (i + op) % 3;
              }
              int m = cache.admit(keys, segs, 1);
              if (m >= 0) {
                cache.publish(keys, segs, m);
                running.add(keys);
              }
            }
            if (cache.usedBlocks() > cache.capacityBlocks()) {
              throw new AssertionError("used " + cache.usedBlocks() + " > capacity");
            }
            for (long[] keys : running) {
              for (long k : keys) {
                if (!cache.isPinned(k)) {
                  throw new AssertionError("running segment " + k + " not pinned");
                }
              }
            }
          }
        });
  }
}
