package io.affinityrouter.examples.simulator.capacity;

import io.affinityrouter.examples.simulator.engine.RunResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.DoubleFunction;

/**
 * Finds the highest request rate a strategy carries: the fleet's capacity at the p90 TTFT SLO. A
 * rate is carried when its run meets the SLO <em>and</em> serves at least {@value #MIN_SERVED_RATIO}
 * of what the same requests would give with no wait past their TTFT floor
 * ({@link RunResult#servedRatio()}): a closed-loop workload whose turns are held back by a
 * thrashing replica sends fewer turns, and may pass the SLO while serving far less than offered.
 * Both conditions are one {@linkplain #stress stress} figure, carried at or below 1. From a
 * starting rate the sweep steps up (or down) by {@value #STEP} until the stress crosses 1, bisects
 * the bracket {@value #BISECTIONS} times on a log scale, and interpolates linearly between the two
 * closest points on either side. Every point run is kept, for the chart.
 *
 * <p>A run is a full simulation at one rate ({@code run}); p90 TTFT rises, and the served ratio
 * falls, with the rate for every strategy the simulator has (more arrivals, longer queues), which
 * is all the search needs. Not thread-safe; one sweep per strategy.
 */
public final class CapacitySweep {
  /** The step between sweep points while looking for the crossing: {@value}. */
  static final double STEP = 1.25;
  /** Bisections of the bracket: {@value} (a 1.25 bracket narrows to about 2.8%). */
  static final int BISECTIONS = 3;
  /** Steps up taken at most before giving up: {@value} (15 × the start). */
  static final int MAX_STEPS_UP = 12;
  /** Steps down taken at most before giving up: {@value} (a sixth of the start). */
  static final int MAX_STEPS_DOWN = 8;
  /** The share of the ideal served rate a run must reach to carry its offered rate: {@value}. */
  public static final double MIN_SERVED_RATIO = 0.95;

  /** One run: its offered rate and what came of it. */
  public record Point(double rate, RunResult result) {
    /** p90 TTFT, ms. */
    public double p90Millis() {
      return result.ttftMillis(90);
    }

    /** This run's {@linkplain CapacitySweep#stress stress} at {@code sloMillis}. */
    public double stress(double sloMillis) {
      return CapacitySweep.stress(result, sloMillis);
    }
  }

  /**
   * A sweep's outcome.
   *
   * @param capacity the interpolated rate at which p90 TTFT reaches the SLO, requests per second;
   *     0 if even the lowest rate tried breaks it, the highest rate tried if none did
   * @param points every run, by rate
   */
  public record Result(double capacity, List<Point> points) {}

  private final double sloMillis;
  private final DoubleFunction<RunResult> run;
  private final TreeMap<Double, Point> points = new TreeMap<>();

  /**
   * Creates a sweep.
   *
   * @param sloMillis the p90 TTFT SLO, ms
   * @param run runs the strategy at a rate (requests per second)
   * @throws IllegalArgumentException if the SLO is not positive and finite
   */
  public CapacitySweep(double sloMillis, DoubleFunction<RunResult> run) {
    if (!(sloMillis > 0) || Double.isInfinite(sloMillis)) {
      throw new IllegalArgumentException("sloMillis: " + sloMillis + " (expected: > 0 and finite)");
    }
    this.sloMillis = sloMillis;
    this.run = run;
  }

  /**
   * Sweeps from {@code startRate}.
   *
   * @throws IllegalArgumentException if the start rate is not positive and finite
   */
  public Result sweep(double startRate) {
    if (!(startRate > 0) || Double.isInfinite(startRate)) {
      throw new IllegalArgumentException("startRate: " + startRate + " (expected: > 0 and finite)");
    }
    double lo;
    double hi;
    double r = startRate;
    if (meets(r)) {
      int steps = 0;
      while (meets(r * STEP)) {
        r *= STEP;
        if (++steps >= MAX_STEPS_UP) {
          return result();
        }
      }
      lo = r;
      hi = r * STEP;
    } else {
      int steps = 0;
      while (!meets(r / STEP)) {
        r /= STEP;
        if (++steps >= MAX_STEPS_DOWN) {
          return result();
        }
      }
      lo = r / STEP;
      hi = r;
    }
    for (int i = 0; i < BISECTIONS; i++) {
      double mid = Math.sqrt(lo * hi);
      if (meets(mid)) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return result();
  }

  private boolean meets(double rate) {
    return at(rate).stress(sloMillis) <= 1;
  }

  /**
   * How far a run is from breaking its limits: the larger of p90 TTFT over the SLO and
   * {@value #MIN_SERVED_RATIO} over the served ratio; the run carries its rate when this is at most
   * 1.
   */
  public static double stress(RunResult r, double sloMillis) {
    double served = r.servedRatio();
    double byServed = served <= 0 ? Double.MAX_VALUE : MIN_SERVED_RATIO / served;
    return Math.max(r.ttftMillis(90) / sloMillis, byServed);
  }

  private Point at(double rate) {
    Point p = points.get(rate);
    if (p == null) {
      p = new Point(rate, run.apply(rate));
      points.put(rate, p);
    }
    return p;
  }

  private Result result() {
    return new Result(capacity(new ArrayList<>(points.values()), sloMillis),
        new ArrayList<>(points.values()));
  }

  /**
   * The interpolated capacity of sorted points: between the highest rate that is carried below
   * the lowest that is not, and that one, where the first limit the upper one breaks (p90 TTFT
   * against the SLO, the served ratio against {@value #MIN_SERVED_RATIO}) is reached.
   */
  static double capacity(List<Point> sorted, double sloMillis) {
    Point below = null;
    Point above = null;
    for (Point p : sorted) {
      if (p.stress(sloMillis) > 1) {
        above = p;
        break;
      }
      below = p;
    }
    if (below == null) {
      return 0;
    }
    if (above == null) {
      return below.rate();
    }
    // each limit the upper point breaks is interpolated on its own figure; the first to break wins
    double f = 1;
    if (above.p90Millis() > sloMillis) {
      f = Math.min(f, (sloMillis - below.p90Millis()) / (above.p90Millis() - below.p90Millis()));
    }
    double servedAbove = above.result().servedRatio();
    if (servedAbove < MIN_SERVED_RATIO) {
      double servedBelow = below.result().servedRatio();
      f = Math.min(f, (servedBelow - MIN_SERVED_RATIO) / (servedBelow - servedAbove));
    }
    return below.rate() + Math.max(0, Math.min(1, f)) * (above.rate() - below.rate());
  }

  /** The points as a map by rate (for reports). */
  static Map<Double, Point> byRate(List<Point> points) {
    Map<Double, Point> m = new TreeMap<>();
    for (Point p : points) {
      m.put(p.rate(), p);
    }
    return m;
  }
}
