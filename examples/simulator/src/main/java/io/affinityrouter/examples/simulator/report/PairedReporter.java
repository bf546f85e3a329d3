package io.affinityrouter.examples.simulator.report;

import io.affinityrouter.examples.simulator.engine.RunResult;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * Compares one strategy (the baseline, normally the real router) with every other over several
 * seeds, paired by seed: for each workload and strategy, the mean of (baseline − strategy) over the
 * seeds both ran, with its standard error. Pairing removes what a seed does to every strategy alike
 * (the agent sessions it draws, the gateways it assigns), so a difference smaller than a single
 * run's spread can still be told from noise.
 *
 * <p>A verdict line per workload names the best <em>peer</em> (the caller's predicate: emulations,
 * not variants of the router or the infinite-cache bound) on hit rate and on TTFT p99, and says
 * whether the baseline is ahead of it, behind it, or level with it (the paired difference within
 * two standard errors of zero). Stateless and thread-safe.
 */
public final class PairedReporter {
  /** The header row of {@link #csv}. */
  public static final String HEADER = "workload,strategy,seeds,hit_rate_pct,ttft_p99_ms,"
      + "delta_hit_points,delta_hit_se,delta_ttft_p99_ms,delta_ttft_p99_se";

  private PairedReporter() {}

  /**
   * One run's figures.
   *
   * @param seed the run's seed
   * @param workload the workload's name
   * @param strategy the strategy's name
   * @param hitPercent cached prompt tokens over prompt tokens, percent
   * @param ttftP99Millis the 99th percentile of time to first token, milliseconds
   */
  public record Sample(long seed, String workload, String strategy, double hitPercent,
      double ttftP99Millis) {
    /** The figures of {@code result}, run with {@code seed}. */
    public static Sample of(long seed, RunResult result) {
      return new Sample(seed, result.workload(), result.strategy(), 100 * result.hitRate(),
          result.ttftMillis(99));
    }
  }

  /**
   * One strategy against the baseline on one workload, over the seeds both ran.
   *
   * @param workload the workload
   * @param strategy the strategy (the baseline itself has zero differences)
   * @param seeds how many seeds both ran
   * @param hitPercent the strategy's mean hit rate over those seeds, percent
   * @param ttftP99Millis the strategy's mean TTFT p99 over those seeds, milliseconds
   * @param deltaHit mean of baseline − strategy hit rate, percentage points
   * @param deltaHitSe its standard error (NaN with fewer than two seeds)
   * @param deltaP99 mean of baseline − strategy TTFT p99, milliseconds
   * @param deltaP99Se its standard error (NaN with fewer than two seeds)
   */
  public record Row(String workload, String strategy, int seeds, double hitPercent,
      double ttftP99Millis, double deltaHit, double deltaHitSe, double deltaP99,
      double deltaP99Se) {}

  /**
   * The paired rows, per workload in order of appearance, the baseline first, then the other
   * strategies in order of appearance. Workloads the baseline did not run are left out.
   *
   * @throws IllegalArgumentException if the same (seed, workload, strategy) appears twice
   */
  public static List<Row> compare(List<Sample> samples, String baseline) {
    Map<String, Map<String, Map<Long, Sample>>> byWorkload = new LinkedHashMap<>();
    for (Sample s : samples) {
      Map<Long, Sample> bySeed = byWorkload.computeIfAbsent(s.workload(), w -> new LinkedHashMap<>())
          .computeIfAbsent(s.strategy(), k -> new TreeMap<>());
      if (bySeed.put(s.seed(), s) != null) {
        throw new IllegalArgumentException("sample: seed " + s.seed() + ", " + s.workload() + ", "
            + s.strategy() + " (expected: one per seed, workload and strategy)");
      }
    }
    List<Row> rows = new ArrayList<>();
    for (Map.Entry<String, Map<String, Map<Long, Sample>>> w : byWorkload.entrySet()) {
      Map<Long, Sample> base = w.getValue().get(baseline);
      if (base == null) {
        continue;
      }
      Set<String> order = new LinkedHashSet<>();
      order.add(baseline);
      order.addAll(w.getValue().keySet());
      for (String strategy : order) {
        Map<Long, Sample> other = w.getValue().get(strategy);
        List<Long> seeds = new ArrayList<>(base.keySet());
        seeds.retainAll(other.keySet());
        if (seeds.isEmpty()) {
          continue;
        }
        double[] hit = new double[seeds.size()];
        double[] p99 = new double[seeds.size()];
        double[] dHit = new double[seeds.size()];
        double[] dP99 = new double[seeds.size()];
        for (int i = 0; i < seeds.size(); i++) {
          Sample b = base.get(seeds.get(i));
          Sample o = other.get(seeds.get(i));
          hit[i] = o.hitPercent();
          p99[i] = o.ttftP99Millis();
          dHit[i] = b.hitPercent() - o.hitPercent();
          dP99[i] = b.ttftP99Millis() - o.ttftP99Millis();
        }
        rows.add(new Row(w.getKey(), strategy, seeds.size(), mean(hit), mean(p99), mean(dHit),
            standardError(dHit), mean(dP99), standardError(dP99)));
      }
    }
    return rows;
  }

  /**
   * The text table with a verdict per workload; {@code isPeer} tells which strategies the verdict
   * compares the baseline with.
   */
  public static String format(List<Sample> samples, String baseline, Predicate<String> isPeer) {
    List<Row> rows = compare(samples, baseline);
    Set<Long> seeds = new java.util.TreeSet<>();
    samples.forEach(s -> seeds.add(s.seed()));
    StringBuilder b = new StringBuilder(String.format(Locale.ROOT,
        "%n== paired over %d seeds %s: %s minus each strategy, mean ± standard error ==%n",
        seeds.size(), seeds, baseline));
    b.append(String.format(Locale.ROOT, "%-22s %-24s %5s %7s %9s %17s %17s%n", "workload",
        "strategy", "seeds", "hit%", "TTFTp99ms", "Δhit points", "ΔTTFTp99 ms"));
    String workload = null;
    List<Row> block = new ArrayList<>();
    for (Row r : rows) {
      if (!r.workload().equals(workload)) {
        verdict(b, block, isPeer);
        block.clear();
        workload = r.workload();
      }
      block.add(r);
      boolean self = r.strategy().equals(baseline);
      b.append(String.format(Locale.ROOT, "%-22s %-24s %5d %7.2f %9.0f %17s %17s%n",
          block.size() == 1 ? r.workload() : "", r.strategy(), r.seeds(), r.hitPercent(),
          r.ttftP99Millis(), self ? "" : pm(r.deltaHit(), r.deltaHitSe(), 2),
          self ? "" : pm(r.deltaP99(), r.deltaP99Se(), 0)));
    }
    verdict(b, block, isPeer);
    return b.toString();
  }

  /** The rows of {@link #compare} as CSV, with {@link #HEADER}. */
  public static String csv(List<Sample> samples, String baseline) {
    StringBuilder b = new StringBuilder(HEADER).append('\n');
    for (Row r : compare(samples, baseline)) {
      b.append(String.format(Locale.ROOT, "%s,%s,%d,%.4f,%.2f,%.4f,%.4f,%.2f,%.2f%n",
          r.workload(), r.strategy(), r.seeds(), r.hitPercent(), r.ttftP99Millis(), r.deltaHit(),
          r.deltaHitSe(), r.deltaP99(), r.deltaP99Se()));
    }
    return b.toString();
  }

  private static void verdict(StringBuilder b, List<Row> block, Predicate<String> isPeer) {
    if (block.isEmpty()) {
      return;
    }
    Row bestHit = null;
    Row bestP99 = null;
    for (Row r : block) {
      if (!isPeer.test(r.strategy())) {
        continue;
      }
      if (bestHit == null || r.hitPercent() > bestHit.hitPercent()) {
        bestHit = r;
      }
      if (bestP99 == null || r.ttftP99Millis() < bestP99.ttftP99Millis()) {
        bestP99 = r;
      }
    }
    if (bestHit == null) {
      return;
    }
    b.append(String.format(Locale.ROOT, "  verdict: hit rate %s best peer %s (%s points); "
        + "TTFT p99 %s best peer %s (%s ms)%n",
        standing(bestHit.deltaHit(), bestHit.deltaHitSe(), true), bestHit.strategy(),
        pm(bestHit.deltaHit(), bestHit.deltaHitSe(), 2),
        standing(bestP99.deltaP99(), bestP99.deltaP99Se(), false), bestP99.strategy(),
        pm(bestP99.deltaP99(), bestP99.deltaP99Se(), 0)));
  }

  /** "ahead of", "behind" or "level with" (within two standard errors, or a single seed's zero). */
  private static String standing(double delta, double se, boolean higherIsBetter) {
    double bound = Double.isNaN(se) ? 0 : 2 * se;
    if (Math.abs(delta) <= bound) {
      return "level with";
    }
    return (delta > 0) == higherIsBetter ? "ahead of" : "behind";
  }

  private static String pm(double mean, double se, int decimals) {
    String f = "%+." + decimals + "f";
    String m = String.format(Locale.ROOT, f, mean);
    return Double.isNaN(se) ? m
        : m + " ± " + String.format(Locale.ROOT, "%." + decimals + "f", se);
  }

  private static double mean(double[] x) {
    double sum = 0;
    for (double v : x) {
      sum += v;
    }
    return sum / x.length;
  }

  /** The standard error of the mean: sample standard deviation over √n; NaN for n < 2. */
  static double standardError(double[] x) {
    if (x.length < 2) {
      return Double.NaN;
    }
    double m = mean(x);
    double ss = 0;
    for (double v : x) {
      ss += (v - m) * (v - m);
    }
    return Math.sqrt(ss / (x.length - 1)) / Math.sqrt(x.length);
  }

  /**
   * Writes the CSV file, creating parent folders.
   *
   * @throws java.io.UncheckedIOException if it cannot be written
   */
  public static void write(List<Sample> samples, String baseline, java.nio.file.Path file) {
    ReportFile.write(file, csv(samples, baseline));
  }
}
