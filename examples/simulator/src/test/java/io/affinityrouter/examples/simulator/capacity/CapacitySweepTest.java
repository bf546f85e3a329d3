package io.affinityrouter.examples.simulator.capacity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.affinityrouter.examples.simulator.engine.RunResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.DoubleUnaryOperator;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class CapacitySweepTest {
  /** A run whose every request had the given TTFT (so its p90 is that TTFT). */
  static RunResult withTtftMillis(double millis) {
    Histogram ttft = new Histogram(3);
    ttft.recordValue(Math.max(1, Math.round(millis * 1000)));
    Histogram other = new Histogram(3);
    other.recordValue(1);
    return new RunResult("s", "w", 1, 1, 0, 0, 0, 1, 0, 0, 0, 1, ttft, other, other, 1,
        new long[] {1}, Map.of(), 0, List.of(), 1, 0, 0);
  }

  private static CapacitySweep sweep(double slo, DoubleUnaryOperator p90, List<Double> rates) {
    return new CapacitySweep(slo, rate -> {
      rates.add(rate);
      return withTtftMillis(p90.applyAsDouble(rate));
    });
  }

  @Test
  void findsTheRateWhereP90ReachesTheSloFromBelowOrAbove() {
    DoubleUnaryOperator p90 = r -> 100 * r; // the SLO of 2000 ms is reached at 20 req/s
    for (double start : new double[] {3, 19, 21, 90}) {
      List<Double> rates = new ArrayList<>();
      CapacitySweep.Result r = sweep(2000, p90, rates).sweep(start);
      assertThat(r.capacity()).as("from " + start).isCloseTo(20, within(0.2));
      assertThat(r.points()).extracting(CapacitySweep.Point::rate).isSorted();
      assertThat(rates).as("each rate runs once").doesNotHaveDuplicates();
    }
  }

  @Test
  void interpolatesBetweenTheClosestPointsEitherSide() {
    List<CapacitySweep.Point> pts = List.of(
        new CapacitySweep.Point(10, withTtftMillis(1000)),
        new CapacitySweep.Point(12, withTtftMillis(1500)),
        new CapacitySweep.Point(14, withTtftMillis(2500)),
        new CapacitySweep.Point(16, withTtftMillis(9000)));
    assertThat(CapacitySweep.capacity(pts, 2000)).isCloseTo(13, within(0.05));
  }

  @Test
  void aCollapseAfterTheSloIsFoundAndStepsAreBounded() {
    // p90 jumps from well within to far past the SLO: the crossing is bracketed, not extrapolated
    List<Double> rates = new ArrayList<>();
    CapacitySweep.Result r = sweep(300, x -> x < 7 ? 50 : 60_000, rates).sweep(1);
    assertThat(r.capacity()).isBetween(6.5, 7.0);
    // a strategy that never meets the SLO has capacity 0 after a bounded search
    rates.clear();
    CapacitySweep.Result never = sweep(300, x -> 10_000, rates).sweep(10);
    assertThat(never.capacity()).isZero();
    assertThat(rates).hasSizeLessThanOrEqualTo(CapacitySweep.MAX_STEPS_DOWN + 1);
  }

  @Test
  void badArgumentsAreRejectedWithTheReason() {
    assertThatThrownBy(() -> new CapacitySweep(0, r -> null))
        .hasMessage("sloMillis: 0.0 (expected: > 0 and finite)");
    assertThatThrownBy(() -> new CapacitySweep(100, r -> null).sweep(Double.NaN))
        .hasMessage("startRate: NaN (expected: > 0 and finite)");
  }
}
