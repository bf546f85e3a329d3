package io.affinityrouter.core.pick;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class TopKPickerTest {
  private final int[] best = new int[8];

  private int[] counts(TopKPicker picker, double[] cost, double[] ramp, long placement) {
    int n = cost.length;
    boolean[] allowed = new boolean[n];
    java.util.Arrays.fill(allowed, true);
    long[] ids = new long[n];
    for (int i = 0; i < n; i++) {
      ids[i] = Rendezvous.idHash("r" + i);
    }
    int[] counts = new int[n];
    SplittableRandom rnd = new SplittableRandom(3);
    for (int i = 0; i < 20_000; i++) {
      counts[picker.pick(cost, allowed, ramp, ids, n, placement, rnd, best)]++;
    }
    return counts;
  }

  private static double[] ones(int n) {
    double[] r = new double[n];
    java.util.Arrays.fill(r, 1);
    return r;
  }

  @Test
  void drawsOnlyAmongTheKCheapestWithinTheWindow() {
    TopKPicker picker = new TopKPicker(3, 0.01, 0, 0, 0.1);
    double[] cost = {0.100, 0.105, 0.108, 0.109, 0.5};
    int[] c = counts(picker, cost, ones(5), TopKPicker.NO_PLACEMENT);
    assertThat(c[3]).isZero(); // fourth cheapest: outside k
    assertThat(c[4]).isZero();
    assertThat(c[0]).isBetween(6000, 7400);
    assertThat(c[1]).isBetween(6000, 7400);
    assertThat(c[2]).isBetween(6000, 7400);
  }

  @Test
  void aClearlyCheapestReplicaIsAlwaysChosen() {
    TopKPicker picker = new TopKPicker(5, 0.002, 0.1, 0, 0.1);
    double[] cost = {0.200, 0.010, 0.200, 0.201};
    assertThat(counts(picker, cost, ones(4), TopKPicker.NO_PLACEMENT)[1]).isEqualTo(20_000);
  }

  @Test
  void rampingReplicasGetAShareProportionalToTheirWeight() {
    TopKPicker picker = new TopKPicker(4, 0.05, 0, 60_000, 0.1);
    assertThat(picker.rampWeight(0, 6_000)).isEqualTo(0.1);
    assertThat(picker.rampWeight(0, 30_000)).isEqualTo(0.5);
    assertThat(picker.rampWeight(0, 90_000)).isEqualTo(1.0);
    double[] cost = {0.0, 0.1, 0.1, 0.1}; // the new replica is empty: cheapest
    double[] ramp = {0.25, 1, 1, 1};
    int[] c = counts(picker, cost, ramp, TopKPicker.NO_PLACEMENT);
    // Window from the cheapest ramped replica (0.1 + 0.05) keeps the elders in play.
    assertThat(c[0]).isBetween(1300, 2000); // 0.25 / 3.25 of 20,000 = 1,538
  }

  @Test
  void placementIsDeterministicAndSpreadsKeys() {
    TopKPicker picker = new TopKPicker(4, 0.01, 0, 0, 0.1);
    double[] cost = {0.1, 0.1, 0.1, 0.1};
    int[] hits = new int[4];
    for (long key = 1; key <= 4000; key++) {
      int[] c = counts(picker, cost, ones(4), key * 0x9E3779B97F4A7C15L);
      int winner = -1;
      for (int i = 0; i < 4; i++) {
        if (c[i] > 0) {
          assertThat(c[i]).isEqualTo(20_000); // same key, same replica, every time
          winner = i;
        }
      }
      hits[winner]++;
      if (key == 400) {
        break;
      }
    }
    for (int h : hits) {
      assertThat(h).isBetween(60, 140);
    }
  }

  @Test
  void badSettingsAreRefused() {
    assertThatThrownBy(() -> new TopKPicker(0, 0, 0, 0, 0.1))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("topK: 0 (expected: > 0)");
    assertThatThrownBy(() -> new TopKPicker(1, -1, 0, 0, 0.1))
        .hasMessage("epsilon: -1.0 (expected: >= 0)");
    assertThatThrownBy(() -> new TopKPicker(1, 0, 0, 0, 0))
        .hasMessage("minRampWeight: 0.0 (expected: > 0 and <= 1)");
  }
}
