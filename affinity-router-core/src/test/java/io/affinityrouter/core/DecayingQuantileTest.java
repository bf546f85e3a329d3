package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class DecayingQuantileTest {
  @Test
  void nothingBeforeTheWarmUpThenTheQuantileWithinABucket() {
    DecayingQuantile q = new DecayingQuantile(0.9, 1 << 20, 256);
    for (int i = 1; i < 256; i++) {
      q.record(i / 100.0); // 0.01 .. 2.55 s
      assertThat(q.get()).isZero();
    }
    q.record(2.56);
    assertThat(q.get()).isCloseTo(2.30, within(0.25)); // the 90th percentile, 10 % buckets
  }

  @Test
  void followsAChangeOfWorkloadWithinAFewHalfLives() {
    DecayingQuantile q = new DecayingQuantile(0.98, 1024, 64);
    for (int i = 0; i < 4096; i++) {
      q.record(0.05);
    }
    assertThat(q.get()).isCloseTo(0.05, within(0.006));
    for (int i = 0; i < 8 * 1024; i++) {
      q.record(3.0);
    }
    assertThat(q.get()).isCloseTo(3.0, within(0.31));
  }

  @Test
  void ignoresNegativeAndNotANumberAndCapsHugeSamples() {
    DecayingQuantile q = new DecayingQuantile(0.5, 1024, 64);
    for (int i = 0; i < 64; i++) {
      q.record(-1);
      q.record(Double.NaN);
    }
    assertThat(q.get()).isZero();
    for (int i = 0; i < 64; i++) {
      q.record(1e9);
    }
    assertThat(q.get()).isBetween(6_000.0, 8_000.0);
  }

  @Test
  void badQuantilesAreRefused() {
    assertThatThrownBy(() -> new DecayingQuantile(1.0, 1024, 64))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("quantile: 1.0 (expected: > 0 and < 1)");
    assertThatThrownBy(() -> new DecayingQuantile(0.5, 0, 64))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
