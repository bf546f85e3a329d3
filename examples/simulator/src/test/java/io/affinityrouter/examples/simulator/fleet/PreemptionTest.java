package io.affinityrouter.examples.simulator.fleet;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Recompute preemption as vLLM V1 does it, on replicas whose KV cache fills with decodes. */
class PreemptionTest {
  private final Map<Long, Long> firstToken = new HashMap<>();
  private final Map<Long, Integer> firstTokenCalls = new HashMap<>();
  private final Map<Long, Long> finished = new HashMap<>();
  private final ReplicaEngine.Listener listener = new ReplicaEngine.Listener() {
    @Override
    public void onFirstToken(ReplicaEngine e, Sequence s, long now) {
      firstToken.put(s.request().id(), now);
      firstTokenCalls.merge(s.request().id(), 1, Integer::sum);
    }

    @Override
    public void onFinished(ReplicaEngine e, Sequence s, long now) {
      finished.put(s.request().id(), now);
    }

    @Override
    public void onRejected(ReplicaEngine e, Sequence s, long now) {
      finished.put(s.request().id(), -now);
    }
  };

  private static SimRequest request(long id, long[] segmentIds, int tokensPerSegment, int output) {
    int[] tokens = new int[segmentIds.length];
    Arrays.fill(tokens, tokensPerSegment);
    return new SimRequest(id, null, 0, segmentIds, tokens, output, -1);
  }

  private static ReplicaEngine engine(long blocks, boolean prefixCaching) {
    EngineConfig config = EngineConfig.defaults().withKvBlocks(blocks)
        .withPrefixCaching(prefixCaching);
    return new ReplicaEngine(0, config, new KvCache(blocks, prefixCaching));
  }

  /** Runs one step; returns the time it ended, or -1 when the engine was idle. */
  private long step(ReplicaEngine engine, long now) {
    long d = engine.startStep();
    if (d < 0) {
      return -1;
    }
    engine.finishStep(now + d, listener);
    return now + d;
  }

  private long runUntilIdle(ReplicaEngine engine, long now) {
    long t;
    while ((t = step(engine, now)) >= 0) {
      now = t;
    }
    return now;
  }

  @Test
  void theNewestIsPreemptedAndRecomputedFromTheFrontOfTheQueue() {
    // 16 blocks of 16 tokens, no prefix caching: A and B (4 prompt blocks each, 80 output tokens)
    // need 4 + 5 blocks each by the end, more than the cache holds together.
    ReplicaEngine engine = engine(16, false);
    EngineConfig config = engine.config();
    Sequence a = new Sequence(request(1, new long[] {1, 2}, 32, 80), config, null);
    Sequence b = new Sequence(request(2, new long[] {3, 4}, 32, 80), config, null);
    Sequence c = new Sequence(request(3, new long[] {5, 6, 7, 8}, 28, 2), config, null);
    engine.submit(a);
    engine.submit(b);
    long now = step(engine, 0);
    engine.submit(c); // 8 blocks: waits behind the two decodes
    int generatedAtPreemption = -1;
    long preemptedAt = -1;
    boolean sawReadmission = false;
    while (true) {
      long t = step(engine, now);
      if (t < 0) {
        break;
      }
      if (b.preemptions() == 1 && generatedAtPreemption < 0) {
        generatedAtPreemption = b.generated();
        preemptedAt = now;
        assertThat(engine.peekWaiting()).as("back at the front of the queue").isSameAs(b);
        assertThat(engine.waitingCount()).isEqualTo(2);
        assertThat(a.isAdmitted()).as("the older one keeps running").isTrue();
        assertThat(b.isAdmitted()).isFalse();
      }
      if (generatedAtPreemption >= 0 && b.isAdmitted() && !sawReadmission) {
        sawReadmission = true;
        assertThat(c.isAdmitted()).as("readmitted ahead of the request queued before").isFalse();
      }
      now = t;
    }
    assertThat(engine.preemptions()).isEqualTo(1);
    assertThat(a.preemptions()).isZero();
    assertThat(c.preemptions()).isZero();
    assertThat(sawReadmission).isTrue();
    // A's 65th output token needs its 5th block while A and B hold all 16.
    assertThat(generatedAtPreemption).isEqualTo(65);
    // B prefills its prompt again and its 65 output tokens (the last one's KV is new work).
    assertThat(engine.prefilledTokens()).isEqualTo(64 + 64 + (64 + 65) + 112);
    assertThat(engine.recomputedTokens()).isEqualTo(64 + 65 - 1);
    assertThat(engine.generatedTokens()).isEqualTo(80 + 80 + 2);
    assertThat(b.generated()).isEqualTo(80);
    // Its first token stands; its later tokens were delayed.
    assertThat(firstTokenCalls).containsEntry(2L, 1);
    assertThat(firstToken.get(2L)).isLessThan(preemptedAt);
    assertThat(finished.get(2L)).isGreaterThan(finished.get(1L));
    assertThat(finished.get(3L)).isGreaterThan(finished.get(2L));
    assertThat(engine.cache().usedBlocks()).as("every block returned").isZero();
  }

  @Test
  void aPreemptedRequestHitsWhatIsLeftOfItsPromptInThePrefixCache() {
    ReplicaEngine engine = engine(16, true);
    EngineConfig config = engine.config();
    Sequence a = new Sequence(request(1, new long[] {1, 2}, 32, 80), config, null);
    Sequence b = new Sequence(request(2, new long[] {3, 4}, 32, 80), config, null);
    engine.submit(a);
    engine.submit(b);
    runUntilIdle(engine, 0);
    assertThat(engine.preemptions()).isEqualTo(1);
    assertThat(b.preemptions()).isEqualTo(1);
    // Its prompt stayed cached (the freed output blocks were enough for A): only its 65 output
    // tokens are prefilled again, 64 of which had been computed.
    assertThat(engine.prefilledTokens()).isEqualTo(64 + 64 + 65);
    assertThat(engine.recomputedTokens()).isEqualTo(64);
    assertThat(b.cachedTokens()).as("the hit of its first admission").isZero();
    KvCache cache = engine.cache();
    assertThat(cache.activeBlocks()).isZero();
    assertThat(cache.usedBlocks()).isEqualTo(cache.cachedBlocks()).isEqualTo(8);
  }

  @Test
  void aRequestPreemptedBeforeItsFirstTokenReportsTheHitOfItsFirstAdmission() {
    // 40 tokens per step, so that B's 128-token prefill spans four steps.
    EngineConfig config = new EngineConfig(16, 16, 40, 1024, true, CostModel.QWEN25_7B_H100);
    ReplicaEngine engine = new ReplicaEngine(0, config, new KvCache(16, true));
    engine.submit(new Sequence(request(1, new long[] {1}, 32, 1), config, null));
    long now = runUntilIdle(engine, 0); // segment 1 stays cached
    Sequence a = new Sequence(request(2, new long[] {7}, 32, 120), config, null);
    engine.submit(a);
    while (a.generated() < 62) {
      now = step(engine, now);
    }
    // B finds segment 1 cached and takes the last 8 free blocks; A's 65th token then needs one.
    Sequence b = new Sequence(request(3, new long[] {1, 9, 10, 11, 12}, 32, 40), config, null);
    engine.submit(b);
    while (b.preemptions() == 0) {
      now = step(engine, now);
    }
    assertThat(b.generated()).as("preempted while prefilling").isZero();
    assertThat(firstTokenCalls).doesNotContainKey(3L);
    runUntilIdle(engine, now);
    assertThat(b.preemptions()).isEqualTo(1);
    assertThat(b.cachedTokens()).isEqualTo(32);
    assertThat(b.generated()).isEqualTo(40);
    assertThat(firstTokenCalls).containsEntry(3L, 1);
    assertThat(engine.cache().activeBlocks()).isZero();
    assertThat(engine.cache().usedBlocks()).isEqualTo(engine.cache().cachedBlocks());
  }

  @Test
  void anOlderSequenceIsNeverPreemptedWhileANewerOneRuns() {
    ReplicaEngine engine = engine(60, true);
    EngineConfig config = engine.config();
    List<Sequence> all = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      Sequence s = new Sequence(request(i, new long[] {100 + i, 200 + i}, 40 + 8 * i,
          60 + 17 * i), config, null);
      all.add(s);
      engine.submit(s);
    }
    long now = 0;
    while (true) {
      List<Sequence> before = List.copyOf(engine.runningView());
      Map<Sequence, Integer> preemptionsBefore = new HashMap<>();
      for (Sequence s : all) {
        preemptionsBefore.put(s, s.preemptions());
      }
      long d = engine.startStep();
      if (d < 0) {
        break;
      }
      List<Sequence> after = engine.runningView();
      for (Sequence p : all) {
        if (p.preemptions() > preemptionsBefore.get(p)) {
          int age = before.indexOf(p);
          assertThat(age).as("a preempted request was running").isNotNegative();
          for (Sequence r : after) {
            assertThat(before.indexOf(r)).as("still running: admitted before the preempted one")
                .isBetween(0, age - 1);
          }
        }
      }
      now += d;
      engine.finishStep(now, listener);
    }
    assertThat(engine.preemptions()).as("the cache was tight enough").isPositive();
    assertThat(finished).hasSize(12);
    for (Sequence s : all) {
      assertThat(s.generated()).isEqualTo(s.request().outputTokens());
    }
    assertThat(engine.cache().activeBlocks()).isZero();
    assertThat(engine.cache().usedBlocks()).isEqualTo(engine.cache().cachedBlocks());
  }

  @Test
  void withAmpleKvNothingIsPreemptedAndTheRunEqualsOneWithUnlimitedMemory() {
    EngineConfig config = EngineConfig.defaults();
    ReplicaEngine ample = new ReplicaEngine(0, config, new KvCache(config.kvBlocks(), true));
    ReplicaEngine unlimited = new ReplicaEngine(0, config, KvCache.infinite());
    Map<Long, Long> firstAmple = new HashMap<>();
    Map<Long, Long> doneAmple = new HashMap<>();
    for (ReplicaEngine engine : List.of(ample, unlimited)) {
      firstToken.clear();
      finished.clear();
      for (int i = 0; i < 40; i++) {
        // Sessions of two turns sharing their first segment, prompts of 2k to 12k tokens.
        engine.submit(new Sequence(request(i, new long[] {1000 + i / 2, 2000 + i},
            1024 + 256 * (i % 21), 50 + 13 * i), config, null));
      }
      runUntilIdle(engine, 0);
      if (engine == ample) {
        firstAmple.putAll(firstToken);
        doneAmple.putAll(finished);
      }
    }
    assertThat(ample.preemptions()).isZero();
    assertThat(unlimited.preemptions()).isZero();
    assertThat(firstToken).isEqualTo(firstAmple);
    assertThat(finished).isEqualTo(doneAmple);
    assertThat(ample.prefilledTokens()).isEqualTo(unlimited.prefilledTokens());
    assertThat(ample.busyNanos()).isEqualTo(unlimited.busyNanos());
  }
}
