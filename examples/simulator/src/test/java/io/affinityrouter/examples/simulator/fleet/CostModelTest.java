package io.affinityrouter.examples.simulator.fleet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;
import static org.assertj.core.api.Assertions.withinPercentage;

import org.junit.jupiter.api.Test;

class CostModelTest {
  private static final CostModel M = CostModel.QWEN25_7B_H100;

  /** The linear part of a step of {@code tokens} batched tokens, ms: {@code max(W, b·N)}. */
  private static double linearMillis(long tokens) {
    return (M.stepMicros(tokens, 0, 0, 0) - M.fixedMicros()) / 1000;
  }

  /** A prefill chunk of {@code tokens} tokens with nothing before it, alone in its step, ms. */
  private static double chunkMillis(long tokens) {
    return M.stepMicros(tokens, 0, 0, CostModel.attentionTerm(tokens, 0)) / 1000;
  }

  @Test
  void linearLayersMatchVidursH100ProfileOfA7bModel() {
    // Vidur data/profiling/compute/h100/meta-llama/Llama-2-7b-hf/mlp.csv, one GPU: medians of every
    // op but attention, 32 layers, plus the embedding (kernel time: no per-step overhead a).
    assertThat(linearMillis(1024)).isCloseTo(21.28, withinPercentage(5));
    assertThat(linearMillis(2048)).isCloseTo(40.95, withinPercentage(5));
    assertThat(linearMillis(4096)).isCloseTo(84.32, withinPercentage(5));
    // Below 1k tokens the GPU leaves its weight-read floor more gradually than max(W, b·N).
    assertThat(linearMillis(512)).isCloseTo(12.13, withinPercentage(15));
    assertThat(linearMillis(256)).as("the floor W").isCloseTo(5.55, within(0.01))
        .isLessThan(9.26);
    assertThat(linearMillis(1)).as("the profile's floor").isCloseTo(5.63, withinPercentage(2));
  }

  @Test
  void prefillChunksAndALongPrefill() {
    assertThat(chunkMillis(256)).isCloseTo(7.1, within(0.05));
    assertThat(chunkMillis(512)).isCloseTo(12.3, within(0.05));
    assertThat(chunkMillis(1024)).isCloseTo(23.3, within(0.05));
    // 170 ms of linear layers and 31 ms of attention.
    assertThat(chunkMillis(8192)).isCloseTo(203, within(1.0));
  }

  @Test
  void aDecodeStepMatchesTheMeasuredInterTokenLatency() {
    // Real vLLM 0.15.1, Qwen2.5-7B on one H100: 7.0 ms inter-token latency.
    assertThat(M.stepMicros(0, 1, 1024, 0) / 1000).isCloseTo(7.0, within(0.2));
    assertThat(M.stepMicros(0, 256, 256 * 1024, 0) / 1000).isCloseTo(14, within(0.6));
  }

  @Test
  void thePrefillFloorRejectsNegativeTokensAndAnEmptyBudget() {
    assertThat(M.prefillFloorMicros(0, 100, 8192)).isZero();
    assertThatThrownBy(() -> M.prefillFloorMicros(-1, 0, 8192))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tokens, cached, budget: -1");
    assertThatThrownBy(() -> M.prefillFloorMicros(1, -1, 8192))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> M.prefillFloorMicros(1, 0, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected: >= 0, >= 0, > 0");
  }
}
