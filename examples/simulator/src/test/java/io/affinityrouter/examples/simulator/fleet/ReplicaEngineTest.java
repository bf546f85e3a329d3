package io.affinityrouter.examples.simulator.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReplicaEngineTest {
  private final Map<Long, Long> firstToken = new HashMap<>();
  private final Map<Long, Long> finished = new HashMap<>();
  private final List<Integer> cachedAtFirstToken = new ArrayList<>();
  private final ReplicaEngine.Listener listener = new ReplicaEngine.Listener() {
    @Override
    public void onFirstToken(ReplicaEngine e, Sequence s, long now) {
      firstToken.put(s.request().id(), now);
      cachedAtFirstToken.add(s.cachedTokens());
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
    java.util.Arrays.fill(tokens, tokensPerSegment);
    return new SimRequest(id, null, 0, segmentIds, tokens, output, -1);
  }

  private long runUntilIdle(ReplicaEngine engine, long now) {
    long d;
    while ((d = engine.startStep()) > 0) {
      now += d;
      engine.finishStep(now, listener);
    }
    return now;
  }

  @Test
  void aRequestAloneOnAnIdleEngineReachesItsFirstTokenInExactlyItsPrefillFloor() {
    EngineConfig config = EngineConfig.defaults();
    CostModel m = config.cost();
    int budget = config.maxBatchedTokens();
    ReplicaEngine engine = new ReplicaEngine(0, config, new KvCache(config.kvBlocks(), true));
    // One chunk, then three (8,192 + 8,192 + 3,616), then a continuation with 8,000 tokens cached.
    engine.submit(new Sequence(request(1, new long[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 500, 1),
        config, null));
    long t1 = runUntilIdle(engine, 0);
    assertThat((double) firstToken.get(1L))
        .isCloseTo(1000 * m.prefillFloorMicros(5000, 0, budget), within(1.0));
    engine.submit(new Sequence(request(2, new long[] {21, 22, 23, 24, 25}, 4000, 1), config,
        null));
    long t2 = runUntilIdle(engine, t1);
    assertThat((double) firstToken.get(2L) - t1)
        .isCloseTo(1000 * m.prefillFloorMicros(20_000, 0, budget), within(3.0));
    engine.submit(new Sequence(request(3, new long[] {21, 22, 31}, 4000, 1), config, null));
    runUntilIdle(engine, t2);
    assertThat(cachedAtFirstToken).containsExactly(0, 0, 8000);
    assertThat((double) firstToken.get(3L) - t2)
        .isCloseTo(1000 * m.prefillFloorMicros(4000, 8000, budget), within(1.0));
  }

  @Test
  void requestsSharingStepsTakeLongerThanTheirFloor() {
    EngineConfig config = EngineConfig.defaults();
    CostModel m = config.cost();
    ReplicaEngine engine = new ReplicaEngine(0, config, new KvCache(config.kvBlocks(), true));
    engine.submit(new Sequence(request(1, new long[] {1, 2, 3, 4, 5}, 2000, 40), config, null));
    engine.submit(new Sequence(request(2, new long[] {6, 7, 8, 9, 10}, 2000, 40), config, null));
    runUntilIdle(engine, 0);
    double floor = 1000 * m.prefillFloorMicros(10_000, 0, config.maxBatchedTokens());
    assertThat((double) firstToken.get(1L)).isGreaterThanOrEqualTo(floor);
    assertThat((double) firstToken.get(2L)).isGreaterThan(floor * 1.5);
  }

  @Test
  void cachedPrefixTokensAreNotPrefilledAgain() {
    EngineConfig config = EngineConfig.defaults().withKvBlocks(10_000);
    ReplicaEngine engine = new ReplicaEngine(0, config, new KvCache(10_000, true));
    engine.submit(new Sequence(request(1, new long[] {1, 2, 3, 4}, 512, 1), config, null));
    long t1 = runUntilIdle(engine, 0);
    long prefilledFirst = engine.prefilledTokens();
    engine.submit(new Sequence(request(2, new long[] {1, 2, 3, 9}, 512, 1), config, null));
    long t2 = runUntilIdle(engine, t1) - t1;
    assertThat(prefilledFirst).isEqualTo(2048);
    assertThat(engine.prefilledTokens() - prefilledFirst).as("only the new segment").isEqualTo(512);
    assertThat(cachedAtFirstToken).containsExactly(0, 1536);
    assertThat(t2).isLessThan(t1 / 2);
  }

  @Test
  void aFullyCachedPromptStillComputesItsLastToken() {
    EngineConfig config = EngineConfig.defaults().withKvBlocks(10_000);
    ReplicaEngine engine = new ReplicaEngine(0, config, new KvCache(10_000, true));
    engine.submit(new Sequence(request(1, new long[] {1, 2}, 512, 1), config, null));
    long t = runUntilIdle(engine, 0);
    engine.submit(new Sequence(request(2, new long[] {1, 2}, 512, 1), config, null));
    runUntilIdle(engine, t);
    assertThat(cachedAtFirstToken).containsExactly(0, 1023);
  }

  @Test
  void longPromptsArePrefilledInChunksOfTheTokenBudget() {
    EngineConfig config = EngineConfig.defaults();
    ReplicaEngine engine = new ReplicaEngine(0, config, new KvCache(config.kvBlocks(), true));
    engine.submit(new Sequence(request(1, new long[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
        11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, 1000, 3), config, null));
    int steps = 0;
    long now = 0;
    long d;
    while ((d = engine.startStep()) > 0) {
      now += d;
      engine.finishStep(now, listener);
      steps++;
    }
    // 20,000 tokens at 8,192 per step: 3 prefill steps, the third emits the first token, then 2
    // decode steps for the remaining output tokens.
    assertThat(steps).isEqualTo(5);
    assertThat(engine.generatedTokens()).isEqualTo(3);
  }

  @Test
  void aSecondRequestHitsTheBlocksOfAPrefillStillInProgress() {
    // vLLM V1 caches each full block as soon as its step is scheduled: a request admitted while an
    // earlier prefill is still running reuses what that prefill has computed so far.
    EngineConfig config = EngineConfig.defaults();
    ReplicaEngine engine = new ReplicaEngine(0, config, new KvCache(config.kvBlocks(), true));
    long[] ids = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    engine.submit(new Sequence(request(1, ids, 1024, 1), config, null)); // 10,240 tokens
    long now = engine.startStep(); // the first 8,192-token chunk: segments 1..8
    engine.finishStep(now, listener);
    assertThat(firstToken).isEmpty();
    engine.submit(new Sequence(request(2, ids, 1024, 1), config, null));
    runUntilIdle(engine, now);
    // Admitted next to the first request's last chunk, it found the 8 segments already computed.
    assertThat(cachedAtFirstToken).containsExactly(0, 8 * 1024);
    assertThat(engine.prefilledTokens()).isEqualTo(10_240 + 2 * 1024);
    assertThat(engine.cache().activeBlocks()).isZero(); // every pin released
  }

  @Test
  void aRequestThatDoesNotFitWaitsForBlocksToBeFreed() {
    EngineConfig config = EngineConfig.defaults().withKvBlocks(100);
    ReplicaEngine engine = new ReplicaEngine(0, config, new KvCache(100, true));
    // each needs 64 prompt blocks at admission: only one fits at a time
    engine.submit(new Sequence(request(1, new long[] {1, 2}, 512, 10), config, null));
    engine.submit(new Sequence(request(2, new long[] {3, 4}, 512, 10), config, null));
    assertThat(engine.startStep()).isPositive();
    assertThat(engine.runningCount()).isEqualTo(1);
    assertThat(engine.waitingCount()).isEqualTo(1);
    runUntilIdle(engine, 0);
    assertThat(firstToken.get(2L)).isGreaterThan(finished.get(1L) - 1);
  }

  @Test
  void aRequestLargerThanTheCacheIsRejected() {
    EngineConfig config = EngineConfig.defaults().withKvBlocks(10);
    ReplicaEngine engine = new ReplicaEngine(0, config, new KvCache(10, true));
    engine.submit(new Sequence(request(1, new long[] {1, 2}, 512, 10), config, null));
    runUntilIdle(engine, 0);
    assertThat(finished.get(1L)).isNegative();
  }

  @Test
  void decodeBatchesShareSteps() {
    EngineConfig config = EngineConfig.defaults();
    ReplicaEngine engine = new ReplicaEngine(0, config, new KvCache(config.kvBlocks(), true));
    for (int i = 0; i < 4; i++) {
      engine.submit(new Sequence(request(i, new long[] {100 + i}, 100, 50), config, null));
    }
    runUntilIdle(engine, 0);
    assertThat(finished).hasSize(4);
    assertThat(engine.generatedTokens()).isEqualTo(200);
    // one step admits all four; 49 decode steps follow, shared by the four sequences
    assertThat(engine.busyNanos()).isLessThan(60 * 8_000_000L);
  }
}
