package io.affinityrouter.examples.simulator.capacity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.affinityrouter.examples.simulator.engine.RunResult;
import io.affinityrouter.examples.simulator.engine.SimulationConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.DoubleUnaryOperator;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

class CapacitySweepTest {
  /** A run whose every request had the given TTFT (so its p90 is that TTFT). */
  static RunResult withTtftMillis(double millis) {
    return run(millis, 1.0);
  }

  /**
   * A run of 100 requests whose every TTFT is {@code millis}, served at {@code servedRatio} of the
   * ideal rate (100 requests over 10 s ideally).
   */
  static RunResult run(double millis, double servedRatio) {
    Histogram ttft = new Histogram(3);
    ttft.recordValueWithCount(Math.max(1, Math.round(millis * 1000)), 100);
    Histogram other = new Histogram(3);
    other.recordValue(1);
    long makespan = Math.round(10e9 / servedRatio);
    return new RunResult("s", "w", 100, 100, 0, 0, 0, 1, 0, 0, 0, 1, ttft, other, other, makespan,
        new long[] {1}, Map.of(), 0, List.of(), 1, 0, 0, 10.0, new long[] {1}, 0, 1,
        SimulationConfig.Front.REQUEST, Map.of(), 0, 0, 0);
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
  void aRateIsCarriedOnlyWhenItIsServed() {
    // within the SLO at every rate, but from 12 req/s on only 0.8 of the offered turns are served
    // (closed-loop sessions held back by a thrashing replica): that load is not credited
    List<Double> rates = new ArrayList<>();
    CapacitySweep.Result r = new CapacitySweep(2000, rate -> {
      rates.add(rate);
      return run(500, rate < 12 ? 1.0 : 0.8);
    }).sweep(4);
    assertThat(r.capacity()).isBetween(10.0, 12.0);
    assertThat(r.points()).filteredOn(p -> p.rate() >= 12).isNotEmpty()
        .allSatisfy(p -> assertThat(p.rate()).isGreaterThan(r.capacity()));
    assertThat(CapacitySweep.stress(run(500, 0.8), 2000)).isCloseTo(0.95 / 0.8, within(1e-9));
    assertThat(CapacitySweep.stress(run(500, 1.0), 2000)).isCloseTo(0.95, within(1e-9));
    assertThat(CapacitySweep.stress(run(3000, 1.0), 2000)).isCloseTo(1.5, within(1e-3));
    // served ratio just under the floor fails even with a p90 far inside the SLO
    assertThat(CapacitySweep.stress(run(10, 0.94), 2000)).isGreaterThan(1);
  }

  @Test
  void goodputCountsOnlyTurnsWithinTheSlo() {
    Histogram ttft = new Histogram(3);
    ttft.recordValueWithCount(100_000, 30); // 100 ms
    ttft.recordValueWithCount(5_000_000, 70); // 5 s
    Histogram other = new Histogram(3);
    other.recordValue(1);
    RunResult r = new RunResult("s", "w", 100, 100, 0, 0, 0, 1, 0, 0, 0, 1, ttft, other, other,
        10_000_000_000L, new long[] {1}, Map.of(), 0, List.of(), 1, 0, 0, 10.0,
        new long[] {100_000, 200_000, 6_000_000, 7_000_000}, 0, 1,
        SimulationConfig.Front.REQUEST, Map.of(), 0, 0, 0);
    assertThat(r.goodputPerSecond(2000)).isCloseTo(3.0, within(1e-9));
    assertThat(r.goodputPerSecond(10_000)).isCloseTo(10.0, within(1e-9));
    assertThat(r.sessionSloAttainment(2000)).isEqualTo(0.5);
    assertThat(r.sessionSloAttainment(50)).isZero();
    assertThat(r.servedRatio()).isCloseTo(1.0, within(1e-9));
  }

  @Test
  void badArgumentsAreRejectedWithTheReason() {
    assertThatThrownBy(() -> new CapacitySweep(0, r -> null))
        .hasMessage("sloMillis: 0.0 (expected: > 0 and finite)");
    assertThatThrownBy(() -> new CapacitySweep(100, r -> null).sweep(Double.NaN))
        .hasMessage("startRate: NaN (expected: > 0 and finite)");
  }
}
