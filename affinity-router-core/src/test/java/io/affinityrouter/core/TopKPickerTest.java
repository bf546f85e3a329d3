package io.affinityrouter.core;

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
  void longestLivedTakesTheCacheThatLivesLongestWithinTheWindow() {
    TopKPicker picker = new TopKPicker(5, 0.002, 0.1, 60_000, 0.1);
    boolean[] allowed = {true, true, true, true, true};
    double[] cost = {1.00, 1.05, 1.09, 1.20, 1.02};
    double[] ramp = ones(5);
    double[] lifetime = {40, 90, 120, 500, Double.NaN};
    // 2 lives longest within 1.00 + 10%; 3 lives longer but costs too much; 4's lifetime is unknown
    assertThat(picker.longestLived(0, cost, allowed, ramp, lifetime, 5)).isEqualTo(2);
    assertThat(picker.longestLived(1, cost, allowed, ramp, lifetime, 5)).isEqualTo(2);
    // a replica that cannot be picked does not count
    allowed[2] = false;
    assertThat(picker.longestLived(0, cost, allowed, ramp, lifetime, 5)).isEqualTo(1);
    // nothing lives longer than the pick: the pick stands; an unknown pick stands as well
    assertThat(picker.longestLived(1, cost, allowed, ramp, lifetime, 5)).isEqualTo(1);
    assertThat(picker.longestLived(4, cost, allowed, ramp, lifetime, 5)).isEqualTo(4);
  }

  @Test
  void longestLivedLeavesRampingReplicasToTheirShare() {
    TopKPicker picker = new TopKPicker(5, 0.002, 0.1, 60_000, 0.1);
    boolean[] allowed = {true, true, true};
    double[] cost = {0.50, 1.00, 1.05}; // the fresh replica is cheapest: the window starts at 1.00
    double[] ramp = {0.2, 1, 1};
    double[] lifetime = {Double.POSITIVE_INFINITY, 60, 80};
    // the fresh, empty replica never draws cold prompts for its long lifetime ...
    assertThat(picker.longestLived(1, cost, allowed, ramp, lifetime, 3)).isEqualTo(2);
    // ... but keeps those its ramp-weighted draw gave it
    assertThat(picker.longestLived(0, cost, allowed, ramp, lifetime, 3)).isZero();
    // When every replica is as fresh as the others (a fleet that started together), none is behind
    double[] together = {0.2, 0.2, 0.2};
    double[] costs = {1.00, 1.00, 1.05};
    assertThat(picker.longestLived(0, costs, allowed, together, new double[] {30, 60, 80}, 3))
        .isEqualTo(2);
  }

  @Test
  void longestLivedBreaksTiesForThePick() {
    TopKPicker picker = new TopKPicker(5, 0.002, 0.1, 0, 0.1);
    boolean[] allowed = {true, true, true};
    double[] cost = {1, 1, 1};
    double[] lifetime = {Double.POSITIVE_INFINITY, Double.POSITIVE_INFINITY,
        Double.POSITIVE_INFINITY}; // nothing written anywhere yet
    for (int picked = 0; picked < 3; picked++) {
      assertThat(picker.longestLived(picked, cost, allowed, ones(3), lifetime, 3))
          .isEqualTo(picked);
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
