package io.affinityrouter.examples.simulator.capacity;

import io.affinityrouter.examples.simulator.engine.RunResult;
import io.affinityrouter.examples.simulator.report.ReportFile;
import io.affinityrouter.examples.simulator.report.SvgChart;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Reports a capacity run: {@value #CSV} (one row per workload and strategy, medians over seeds),
 * {@value #POINTS} (every run of every seed), {@value #SVG} (p90 TTFT against offered rate, one
 * chart per workload, the first seed's runs) and a table with each strategy's capacity as a ratio
 * to the best peer's and to the infinite-cache reference's. Stateless and thread-safe.
 */
public final class CapacityReporter {
  /** The capacity file's name. */
  public static final String CSV = "capacity.csv";
  /** The sweep points' file name. */
  public static final String POINTS = "capacity-points.csv";
  /** The chart's file name. */
  public static final String SVG = "capacity.svg";
  /**
   * {@value #CSV}'s header: the first seven columns as they have always been, then the figures over
   * seeds and past capacity (medians over seeds but {@code capacity_rps_min}; goodput = requests
   * whose TTFT met the SLO per second).
   */
  public static final String HEADER = "workload,strategy,slo_p90_ms,capacity_rps,hit_at_capacity,"
      + "hit_at_1_5x,served_rps_at_1_5x,capacity_rps_min,goodput_rps_at_capacity,"
      + "goodput_rps_at_1_5x,goodput_rps_at_2x,hit_at_2x,session_slo_attainment,"
      + "served_ratio_at_capacity,ttft_p90_ms_at_1_5x,ttft_p90_ms_at_2x,served_rps_at_2x,"
      + "refused_at_2x,held_at_2x,seeds,goodput_rps_at_3x,hit_at_3x,ttft_p90_ms_at_3x,"
      + "refused_at_3x,wall_s_at_capacity,wall_s_at_1_5x,wall_s_at_2x,wall_s_at_3x";
  /** {@value #POINTS}'s header. */
  public static final String POINTS_HEADER = "workload,strategy,offered_rps,ttft_p90_ms,"
      + "ttft_p99_ms,hit_rate,served_rps,repins,moved_turns,recomputed_tokens,preemptions,seed,"
      + "served_ratio,goodput_rps,session_slo_attainment,held_requests";

  private CapacityReporter() {}

  /** {@value #CSV}'s text. */
  public static String csv(List<CapacityRun.WorkloadCapacity> workloads) {
    StringBuilder b = new StringBuilder(HEADER).append('\n');
    for (CapacityRun.WorkloadCapacity w : workloads) {
      double slo = w.sloMillis();
      for (CapacityRun.StrategyCapacity s : w.strategies()) {
        b.append(String.format(Locale.ROOT, "%s,%s,%.0f,%.4f,%.5f,%.5f,%.4f,%.4f,%.4f,%.4f,%.4f,"
            + "%.5f,%.4f,%.4f,%.1f,%.1f,%.4f,%.0f,%.0f,%d,%.4f,%.5f,%.1f,%.0f,%.2f,%.2f,%.2f,%.2f%n",
            w.workload(), s.strategy(), slo,
            s.capacity(), s.atCapacity(RunResult::hitRate), s.past(RunResult::hitRate),
            s.past(RunResult::requestsPerSecond), s.capacityMin(),
            s.atCapacity(r -> r.goodputPerSecond(slo)), s.past(r -> r.goodputPerSecond(slo)),
            s.farPast(r -> r.goodputPerSecond(slo)), s.farPast(RunResult::hitRate),
            s.atCapacity(r -> r.sessionSloAttainment(slo)), s.atCapacity(RunResult::servedRatio),
            s.past(r -> r.ttftMillis(90)), s.farPast(r -> r.ttftMillis(90)),
            s.farPast(RunResult::requestsPerSecond), s.farPast(r -> (double) r.notRouted()),
            s.farPast(r -> (double) r.heldRequests()), s.seeds().size(),
            s.overload(r -> r.goodputPerSecond(slo)), s.overload(RunResult::hitRate),
            s.overload(r -> r.ttftMillis(90)), s.overload(r -> (double) r.notRouted()),
            s.wall(CapacityRun.Wall::atCapacity), s.wall(CapacityRun.Wall::past),
            s.wall(CapacityRun.Wall::farPast), s.wall(CapacityRun.Wall::overload)));
      }
    }
    return b.toString();
  }

  /** {@value #POINTS}'s text. */
  public static String points(List<CapacityRun.WorkloadCapacity> workloads) {
    StringBuilder b = new StringBuilder(POINTS_HEADER).append('\n');
    for (CapacityRun.WorkloadCapacity w : workloads) {
      for (CapacityRun.StrategyCapacity s : w.strategies()) {
        for (CapacityRun.SeedRun seed : s.seeds()) {
          for (CapacitySweep.Point p : all(s, seed)) {
            RunResult r = p.result();
            b.append(String.format(Locale.ROOT, "%s,%s,%.4f,%.2f,%.2f,%.5f,%.4f,%d,%d,%d,%d,%d,"
                + "%.4f,%.4f,%.4f,%d%n", w.workload(), s.strategy(), p.rate(), r.ttftMillis(90),
                r.ttftMillis(99), r.hitRate(), r.requestsPerSecond(), r.repins(), r.movedTurns(),
                r.recomputedTokens(), r.preemptions(), seed.seed(), r.servedRatio(),
                r.goodputPerSecond(w.sloMillis()), r.sessionSloAttainment(w.sloMillis()),
                r.heldRequests()));
          }
        }
      }
    }
    return b.toString();
  }

  /** One seed's sweep points plus its runs at capacity and past it, by rate. */
  static List<CapacitySweep.Point> all(CapacityRun.StrategyCapacity s,
      CapacityRun.SeedRun seed) {
    List<CapacitySweep.Point> all = new ArrayList<>(seed.points());
    if (seed.atCapacity() != null) {
      all.add(new CapacitySweep.Point(seed.capacity(), seed.atCapacity()));
    }
    all.add(new CapacitySweep.Point(s.pastRate(), seed.past()));
    all.add(new CapacitySweep.Point(s.farPastRate(), seed.farPast()));
    all.add(new CapacitySweep.Point(s.overloadRate(), seed.overload()));
    return new ArrayList<>(CapacitySweep.byRate(all).values());
  }

  /**
   * The table: per workload, each strategy's capacity (median over seeds, and the lowest), its
   * ratio to the best peer and to the infinite-cache reference, its figures at capacity, and
   * goodput past the router's capacity.
   */
  public static String table(List<CapacityRun.WorkloadCapacity> workloads) {
    StringBuilder b = new StringBuilder();
    for (CapacityRun.WorkloadCapacity w : workloads) {
      double best = w.bestPeerCapacity();
      double ref = w.referenceCapacity();
      double slo = w.sloMillis();
      CapacityRun.StrategyCapacity first = w.strategies().get(0);
      String front = first.pastCapacity().frontDoor();
      b.append(String.format(Locale.ROOT, "== %s: p90 TTFT SLO %.0f ms; %d seeds; best peer %s "
          + "%.2f req/s; past capacity = %.2f, %.2f and %.2f req/s%s ==%n", w.workload(), slo,
          first.seeds().size(), w.bestPeer(), best, first.pastRate(), first.farPastRate(),
          first.overloadRate(),
          front.isEmpty() ? "" : "; " + front));
      b.append(String.format(Locale.ROOT, "%-24s %8s %7s %7s %6s %7s %7s %6s %7s %7s %8s %7s"
          + " %7s %8s %7s %7s %7s %s%n", "strategy", "capacity", "min", "vsPeer", "vsRef",
          "hit@cap", "srv/ide", "sesSLO", "gp@cap", "gp@1.5x", "p90@1.5x", "hit@1.5", "gp@2x",
          "p90@2x", "hit@2x", "gp@3x", "hit@3x", "wall s 1/1.5/2/3x"));
      for (CapacityRun.StrategyCapacity s : w.strategies()) {
        String capacity = (s.bounded(slo) ? "" : ">") + String.format(Locale.ROOT, "%.2f",
            s.capacity());
        b.append(String.format(Locale.ROOT, "%-24s %8s %7.2f %6.2fx %5.2fx %6.1f%% %7.2f %5.0f%%"
            + " %7.2f %7.2f %8.0f %6.1f%% %7.2f %8.0f %6.1f%% %7.2f %6.1f%% %.0f/%.0f/%.0f/%.0f%n",
            s.strategy(), capacity,
            s.capacityMin(), best > 0 ? s.capacity() / best : 0, ref > 0 ? s.capacity() / ref : 0,
            100 * s.atCapacity(RunResult::hitRate), s.atCapacity(RunResult::servedRatio),
            100 * s.atCapacity(r -> r.sessionSloAttainment(slo)),
            s.atCapacity(r -> r.goodputPerSecond(slo)), s.past(r -> r.goodputPerSecond(slo)),
            s.past(r -> r.ttftMillis(90)), 100 * s.past(RunResult::hitRate),
            s.farPast(r -> r.goodputPerSecond(slo)), s.farPast(r -> r.ttftMillis(90)),
            100 * s.farPast(RunResult::hitRate), s.overload(r -> r.goodputPerSecond(slo)),
            100 * s.overload(RunResult::hitRate), s.wall(CapacityRun.Wall::atCapacity),
            s.wall(CapacityRun.Wall::past), s.wall(CapacityRun.Wall::farPast),
            s.wall(CapacityRun.Wall::overload)));
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
        List<CapacitySweep.Point> pts = all(s, s.seeds().get(0));
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
