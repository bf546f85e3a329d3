package io.affinityrouter.examples.simulator.report;

import io.affinityrouter.examples.simulator.engine.RunResult;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Writes a self-contained HTML report with inline SVG charts, per workload: the prefix-cache hit
 * rate of each strategy against the infinite-cache bound, the TTFT distribution of each strategy
 * (CDF on a log scale) against the workload's TTFT floor ({@link RunResult#ttftFloorMillis}), and
 * each replica's in-flight requests over time for each strategy, under the results table. Stateless
 * and thread-safe.
 */
public final class HtmlReporter {
  /** Most points drawn per load-over-time line (samples are bucketed by their maximum). */
  static final int LOAD_POINTS = 240;
  private static final double[] PERCENTILES = {1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 97.5,
      99, 99.5, 99.9, 100};

  private HtmlReporter() {}

  /** The report's HTML. */
  public static String format(List<RunResult> results) {
    Map<String, List<RunResult>> byWorkload = new LinkedHashMap<>();
    for (RunResult r : results) {
      byWorkload.computeIfAbsent(r.workload(), k -> new ArrayList<>()).add(r);
    }
    StringBuilder b = new StringBuilder("<!doctype html><html><head><meta charset=\"utf-8\">"
        + "<title>affinity-router fleet simulator</title><style>body{font-family:sans-serif;"
        + "margin:20px} pre{font-size:12px} .grid{display:flex;flex-wrap:wrap;gap:8px}</style>"
        + "</head><body><h1>affinity-router fleet simulator</h1>");
    b.append("<pre>").append(SvgChart.escape(TableReporter.format(results))).append("</pre>");
    for (Map.Entry<String, List<RunResult>> w : byWorkload.entrySet()) {
      List<RunResult> rs = w.getValue();
      b.append("<h2>").append(SvgChart.escape(w.getKey())).append("</h2>");
      b.append(hitRates(rs)).append("<br>");
      b.append(ttftCdf(w.getKey(), rs));
      b.append("<h3>In-flight requests per replica over time</h3><div class=\"grid\">");
      for (RunResult r : rs) {
        b.append(loadOverTime(r));
      }
      b.append("</div>");
    }
    return b.append("</body></html>").toString();
  }

  private static String hitRates(List<RunResult> rs) {
    List<String> labels = new ArrayList<>();
    double[] values = new double[rs.size()];
    for (int i = 0; i < rs.size(); i++) {
      labels.add(rs.get(i).strategy());
      values[i] = 100 * rs.get(i).hitRate();
    }
    double bound = 100 * rs.get(0).boundRate();
    return SvgChart.bars("Prefix-cache hit rate (% of prompt tokens)", labels, values,
        Math.max(bound, max(values)) * 1.05, "%", bound, "infinite cache");
  }

  private static String ttftCdf(String workload, List<RunResult> rs) {
    List<SvgChart.Series> series = new ArrayList<>();
    for (RunResult r : rs) {
      double[] x = new double[PERCENTILES.length];
      double[] y = new double[PERCENTILES.length];
      for (int i = 0; i < PERCENTILES.length; i++) {
        x[i] = Math.max(1, r.ttftMillis(PERCENTILES[i]));
        y[i] = PERCENTILES[i];
      }
      series.add(new SvgChart.Series(r.strategy(), x, y));
    }
    RunResult first = rs.get(0);
    double[] x = new double[PERCENTILES.length];
    for (int i = 0; i < PERCENTILES.length; i++) {
      x[i] = Math.max(1, first.ttftFloorMillis(PERCENTILES[i]));
    }
    series.add(new SvgChart.Series("floor (no queue, infinite cache)", x, PERCENTILES.clone()));
    return SvgChart.lines("TTFT distribution, " + workload, "TTFT (ms, log scale)",
        "percentile", series, true, 100, 760, 340, true);
  }

  private static String loadOverTime(RunResult r) {
    List<int[]> samples = r.loadSeries();
    if (samples.isEmpty()) {
      return "";
    }
    int replicas = samples.get(0).length;
    int buckets = Math.min(LOAD_POINTS, samples.size());
    List<SvgChart.Series> series = new ArrayList<>();
    for (int k = 0; k < replicas; k++) {
      List<double[]> pts = new ArrayList<>();
      for (int bkt = 0; bkt < buckets; bkt++) {
        int from = (int) ((long) bkt * samples.size() / buckets);
        int to = (int) ((long) (bkt + 1) * samples.size() / buckets);
        int max = -1;
        for (int i = from; i < to; i++) {
          max = Math.max(max, samples.get(i)[k]);
        }
        if (max >= 0) {
          pts.add(new double[] {from * r.sampleNanos() / 1e9, max});
        }
      }
      double[] x = new double[pts.size()];
      double[] y = new double[pts.size()];
      for (int i = 0; i < x.length; i++) {
        x[i] = pts.get(i)[0];
        y[i] = pts.get(i)[1];
      }
      series.add(new SvgChart.Series("replica-" + k, x, y));
    }
    return SvgChart.lines(r.strategy(), "simulated s", "", series, false, Double.NaN, 380, 200,
        false);
  }

  private static double max(double[] v) {
    double m = 0;
    for (double x : v) {
      m = Math.max(m, x);
    }
    return m;
  }

  /**
   * Writes the report, creating parent folders.
   *
   * @throws UncheckedIOException if it cannot be written
   */
  public static void write(List<RunResult> results, Path file) {
    ReportFile.write(file, format(results));
  }
}
