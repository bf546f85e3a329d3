package io.affinityrouter.examples.simulator.fleet;

import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
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

  /**
   * Random arrivals on a replica whose KV cache is small against its requests' prompts and outputs,
   * prefix caching on or off: admissions, per-step block growth and preemptions never take more
   * blocks than the capacity, never preempt a request older than one still running, finish every
   * request with all its output tokens, and give every block back (only cached segments remain).
   */
  @Test
  void admissionDecodeAndPreemptionConserveBlocksWithinCapacity() {
    qt().withExamples(100).forAll(lists().of(integers().between(0, 9_999)).ofSizeBetween(1, 60))
        .checkAssert(ops -> {
          boolean caching = ops.get(0) % 2 == 0;
          // 48 blocks of 16 tokens, 96 tokens per step: prompts of up to 12 blocks prefill in chunks.
          EngineConfig config = new EngineConfig(16, 48, 96, 8, caching, CostModel.QWEN25_7B_H100);
          KvCache cache = new KvCache(48, caching);
          ReplicaEngine engine = new ReplicaEngine(0, config, cache);
          Map<Long, Integer> done = new HashMap<>();
          List<Sequence> all = new ArrayList<>();
          ReplicaEngine.Listener listener = new ReplicaEngine.Listener() {
            @Override
            public void onFirstToken(ReplicaEngine e, Sequence s, long now) { }

            @Override
            public void onFinished(ReplicaEngine e, Sequence s, long now) {
              done.merge(s.request().id(), s.generated(), (x, y) -> -1);
            }

            @Override
            public void onRejected(ReplicaEngine e, Sequence s, long now) {
              done.merge(s.request().id(), 0, (x, y) -> -1);
            }
          };
          long now = 0;
          long id = 0;
          for (int op : ops) {
            // Prompts chain segments from a small set, so that requests share prefixes.
            int segments = 1 + op % 4;
            long[] keys = new long[segments];
            int[] tokens = new int[segments];
            for (int i = 0; i < segments; i++) {
              keys[i] = (i == 0 ? op % 3 : keys[i - 1] * 31 + (op / 7) % 4) + 1;
              tokens[i] = 8 + (op / 3 + 5 * i) % 40;
            }
            Sequence s = new Sequence(new SimRequest(id++, null, 0, keys, tokens,
                1 + (op / 11) % 300, -1), config, null);
            all.add(s);
            engine.submit(s);
            for (int k = 0; k < op % 5 && engine.runningCount() + engine.waitingCount() > 0; k++) {
              now = checkedStep(engine, cache, now, all, listener);
            }
          }
          int steps = 0;
          while (engine.runningCount() + engine.waitingCount() > 0) {
            now = checkedStep(engine, cache, now, all, listener);
            if (++steps > 1_000_000) {
              throw new AssertionError("no progress: " + engine.runningCount() + " running, "
                  + engine.waitingCount() + " waiting");
            }
          }
          for (Sequence s : all) {
            Integer out = done.get(s.request().id());
            if (out == null || out < 0) {
              throw new AssertionError("request " + s.request().id() + " ended " + out);
            }
            if (out != 0 && out != s.request().outputTokens()) {
              throw new AssertionError("request " + s.request().id() + " produced " + out);
            }
          }
          if (cache.activeBlocks() != 0 || cache.usedBlocks() != cache.cachedBlocks()) {
            throw new AssertionError("blocks not returned: active " + cache.activeBlocks()
                + ", used " + cache.usedBlocks() + ", cached " + cache.cachedBlocks());
          }
        });
  }

  private static long checkedStep(ReplicaEngine engine, KvCache cache, long now,
      List<Sequence> all, ReplicaEngine.Listener listener) {
    List<Sequence> before = List.copyOf(engine.runningView());
    int[] preemptions = new int[all.size()];
    for (int i = 0; i < all.size(); i++) {
      preemptions[i] = all.get(i).preemptions();
    }
    long d = engine.startStep();
    if (cache.usedBlocks() > cache.capacityBlocks()) {
      throw new AssertionError("used " + cache.usedBlocks() + " > capacity");
    }
    for (int i = 0; i < all.size(); i++) {
      Sequence p = all.get(i);
      if (p.preemptions() == preemptions[i]) {
        continue;
      }
      int age = before.indexOf(p);
      for (Sequence r : engine.runningView()) {
        int rAge = before.indexOf(r);
        if (rAge < 0 || rAge >= age) {
          throw new AssertionError("preempted " + p.request().id() + " while newer "
              + r.request().id() + " runs");
        }
      }
    }
    if (d < 0) {
      return now;
    }
    engine.finishStep(now + d, listener);
    return now + d;
  }
}
