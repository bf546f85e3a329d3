package io.affinityrouter.examples.simulator.capacity;

import io.affinityrouter.examples.simulator.engine.RunResult;
import io.affinityrouter.examples.simulator.report.ReportFile;
import io.affinityrouter.examples.simulator.report.SvgChart;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Reports a capacity run: {@value #CSV} (one row per workload and strategy), {@value #POINTS} (every
 * sweep run), {@value #SVG} (p90 TTFT against offered rate, one chart per workload) and a table
 * with each strategy's capacity as a ratio to the best peer's. Stateless and thread-safe.
 */
public final class CapacityReporter {
  /** The capacity file's name. */
  public static final String CSV = "capacity.csv";
  /** The sweep points' file name. */
  public static final String POINTS = "capacity-points.csv";
  /** The chart's file name. */
  public static final String SVG = "capacity.svg";
  /** {@value #CSV}'s header. */
  public static final String HEADER = "workload,strategy,slo_p90_ms,capacity_rps,hit_at_capacity,"
      + "hit_at_1_5x,served_rps_at_1_5x";
  /** {@value #POINTS}'s header. */
  public static final String POINTS_HEADER = "workload,strategy,offered_rps,ttft_p90_ms,"
      + "ttft_p99_ms,hit_rate,served_rps,repins,moved_turns,recomputed_tokens,preemptions";

  private CapacityReporter() {}

  /** {@value #CSV}'s text. */
  public static String csv(List<CapacityRun.WorkloadCapacity> workloads) {
    StringBuilder b = new StringBuilder(HEADER).append('\n');
    for (CapacityRun.WorkloadCapacity w : workloads) {
      for (CapacityRun.StrategyCapacity s : w.strategies()) {
        b.append(String.format(Locale.ROOT, "%s,%s,%.0f,%.4f,%.5f,%.5f,%.4f%n", w.workload(),
            s.strategy(), w.sloMillis(), s.capacity(),
            s.atCapacity() == null ? 0 : s.atCapacity().hitRate(), s.pastCapacity().hitRate(),
            s.pastCapacity().requestsPerSecond()));
      }
    }
    return b.toString();
  }

  /** {@value #POINTS}'s text. */
  public static String points(List<CapacityRun.WorkloadCapacity> workloads) {
    StringBuilder b = new StringBuilder(POINTS_HEADER).append('\n');
    for (CapacityRun.WorkloadCapacity w : workloads) {
      for (CapacityRun.StrategyCapacity s : w.strategies()) {
        for (CapacitySweep.Point p : all(s)) {
          RunResult r = p.result();
          b.append(String.format(Locale.ROOT, "%s,%s,%.4f,%.2f,%.2f,%.5f,%.4f,%d,%d,%d,%d%n",
              w.workload(), s.strategy(), p.rate(), r.ttftMillis(90), r.ttftMillis(99),
              r.hitRate(), r.requestsPerSecond(), r.repins(), r.movedTurns(),
              r.recomputedTokens(), r.preemptions()));
        }
      }
    }
    return b.toString();
  }

  /** The sweep's points plus the runs at capacity and past it, by rate. */
  static List<CapacitySweep.Point> all(CapacityRun.StrategyCapacity s) {
    List<CapacitySweep.Point> all = new ArrayList<>(s.points());
    if (s.atCapacity() != null) {
      all.add(new CapacitySweep.Point(s.capacity(), s.atCapacity()));
    }
    all.add(new CapacitySweep.Point(s.pastRate(), s.pastCapacity()));
    return new ArrayList<>(CapacitySweep.byRate(all).values());
  }

  /** The table: per workload, each strategy's capacity, its ratio to the best peer, hit rates. */
  public static String table(List<CapacityRun.WorkloadCapacity> workloads) {
    StringBuilder b = new StringBuilder();
    for (CapacityRun.WorkloadCapacity w : workloads) {
      double best = w.bestPeerCapacity();
      b.append(String.format(Locale.ROOT, "== %s: p90 TTFT SLO %.0f ms; best peer %s "
          + "%.2f req/s; past capacity = %.2f req/s ==%n", w.workload(), w.sloMillis(),
          w.bestPeer(), best, w.strategies().get(0).pastRate()));
      b.append(String.format(Locale.ROOT, "%-24s %9s %8s %7s %8s %9s %8s %9s %8s %9s%n",
          "strategy", "capacity", "vsPeer", "hit@cap", "srv@cap", "p90@1.5x", "hit@1.5x",
          "hit1.5/c", "srv@1.5x", "moved@1.5"));
      for (CapacityRun.StrategyCapacity s : w.strategies()) {
        RunResult past = s.pastCapacity();
        double hitCap = s.atCapacity() == null ? 0 : s.atCapacity().hitRate();
        double servedCap = s.atCapacity() == null ? 0 : s.atCapacity().requestsPerSecond();
        b.append(String.format(Locale.ROOT, "%-24s %9.2f %7.2fx %6.1f%% %8.2f %9.0f %7.1f%% %9.2f"
            + " %8.2f %9d%n", s.strategy(), s.capacity(), best > 0 ? s.capacity() / best : 0,
            100 * hitCap, servedCap, past.ttftMillis(90), 100 * past.hitRate(),
            hitCap > 0 ? past.hitRate() / hitCap : 0, past.requestsPerSecond(),
            past.movedTurns()));
      }
    }
    return b.toString();
  }

  /** {@value #SVG}'s text: one chart per workload, stacked. */
  public static String svg(List<CapacityRun.WorkloadCapacity> workloads) {
    int width = 760;
    int height = 300;
    StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
        "<svg width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\">", width,
        height * workloads.size()));
    for (int k = 0; k < workloads.size(); k++) {
      CapacityRun.WorkloadCapacity w = workloads.get(k);
      List<SvgChart.Series> series = new ArrayList<>();
      double xMin = Double.POSITIVE_INFINITY;
      double xMax = 0;
      for (CapacityRun.StrategyCapacity s : w.strategies()) {
        List<CapacitySweep.Point> pts = all(s);
        double[] x = new double[pts.size()];
        double[] y = new double[pts.size()];
        for (int i = 0; i < pts.size(); i++) {
          x[i] = pts.get(i).rate();
          y[i] = Math.min(pts.get(i).p90Millis(), 3 * w.sloMillis());
          xMin = Math.min(xMin, x[i]);
          xMax = Math.max(xMax, x[i]);
        }
        series.add(new SvgChart.Series(s.strategy(), x, y));
      }
      series.add(new SvgChart.Series(String.format(Locale.ROOT, "SLO %.0f ms", w.sloMillis()),
          new double[] {xMin, xMax}, new double[] {w.sloMillis(), w.sloMillis()}));
      String chart = SvgChart.lines(w.workload() + ": p90 TTFT (ms, capped at 3x SLO) against"
          + " offered rate", "offered requests per second", "p90 TTFT ms", series, false,
          3 * w.sloMillis(), width, height, true);
      b.append(String.format(Locale.ROOT, "<g transform=\"translate(0,%d)\">", k * height))
          .append(chart).append("</g>");
    }
    return b.append("</svg>").toString();
  }

  /** Writes {@value #CSV}, {@value #POINTS} and {@value #SVG} to {@code folder}. */
  public static void write(List<CapacityRun.WorkloadCapacity> workloads, Path folder) {
    ReportFile.write(folder.resolve(CSV), csv(workloads));
    ReportFile.write(folder.resolve(POINTS), points(workloads));
    ReportFile.write(folder.resolve(SVG), svg(workloads));
  }
}
