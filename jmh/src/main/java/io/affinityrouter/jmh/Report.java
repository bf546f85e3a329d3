package io.affinityrouter.jmh;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;

/**
 * Turns a quick profile's results into markdown: every result (mean ± error, fastest iteration,
 * CPU time and allocation per operation), then each goal with the figures it is judged
 * on and a verdict. Time ratios are judged on CPU time per operation ({@link CpuTimeProfiler}),
 * which waiting for a core on a shared machine does not inflate; the wall-clock ratios are shown
 * beside them. Not thread-safe.
 */
final class Report {
  private static final Pattern PER_ENTRY = Pattern.compile("heap per entry\\*\\* \\| \\*\\*([0-9.]+) B");
  private static final Pattern BOUND = Pattern.compile("bound holds \\| (\\S+)");

  private final List<RunResult> results;
  private final String footprint;
  private final double redisGetRps;
  private final int redisThreads;
  private final List<String> redisStats;
  private final StringBuilder goals = new StringBuilder();

  Report(List<RunResult> results, String footprint, double redisGetRps, int redisThreads,
      List<String> redisStats) {
    this.results = results;
    this.footprint = footprint;
    this.redisGetRps = redisGetRps;
    this.redisThreads = redisThreads;
    this.redisStats = redisStats;
  }

  String markdown() {
    StringBuilder md = new StringBuilder();
    md.append("## Results\n\n")
        .append("| benchmark | parameters | mean ± error | fastest iteration | unit | CPU ns/op |"
            + " alloc B/op |\n")
        .append("| --- | --- | ---: | ---: | --- | ---: | ---: |\n");
    for (RunResult r : results) {
      row(md, r, r.getPrimaryResult(), "");
      for (Map.Entry<String, Result> e : r.getSecondaryResults().entrySet()) {
        if (!e.getKey().startsWith("gc.") && !e.getKey().startsWith("cpu.")) {
          row(md, r, e.getValue(), " (" + e.getKey() + ")");
        }
      }
    }
    goals();
    md.append("\n## Goals\n\n| goal | figures (this run) | verdict |\n| --- | --- | --- |\n")
        .append(goals)
        .append("\n## Prefix index footprint\n\n").append(footprint);
    return md.toString();
  }

  private static void row(StringBuilder md, RunResult r, Result<?> res, String suffix) {
    Result<?> alloc = secondary(r, "gc.alloc.rate.norm");
    Result<?> cpu = secondary(r, "cpu.time.norm");
    boolean group = !suffix.isEmpty() || r.getParams().getThreadGroupLabels().size() > 1;
    md.append(String.format(Locale.ROOT, "| %s%s | %s | %s ± %s | %s | %s | %s | %s |%n",
        name(r.getParams()), suffix, params(r.getParams()), num(res.getScore()),
        num(res.getScoreError()), num(fastest(res)), res.getScoreUnit(),
        cpu == null || group ? "" : num(cpu.getScore()),
        alloc == null || !suffix.isEmpty() ? "" : num(alloc.getScore())));
  }

  private void goals() {
    Map<String, String> sel = Map.of("replicas", "64", "promptTokens", "8192",
        "indexBlocks", "1000000");
    for (String traffic : new String[] {"RETURNING", "SESSIONLESS", "NEW"}) {
      RunResult r = find("SelectBenchmark.select", with(sel, "traffic", traffic));
      Result<?> a = r == null ? null : secondary(r, "gc.alloc.rate.norm");
      goal("≤ 128 B allocated per select (in-memory, 64 replicas, pre-hashed 8K tokens), "
          + traffic, a == null ? "missing" : num(a.getScore()) + " B/op",
          a == null ? null : a.getScore() <= 128);
    }
    for (String size : new String[] {"1024", "8192"}) {
      for (String kind : new String[] {"Tokens", "Text"}) {
        Map<String, String> p = Map.of("promptTokens", size);
        ratioGoal("hashing " + kind.toLowerCase(Locale.ROOT) + " ≥ 0.5× the throughput of "
            + "Arrays.hashCode, " + size + " tokens",
            find("BlockHasherBenchmark.arraysHashCode" + kind, p),
            find("BlockHasherBenchmark.hash" + kind, p), 0.5, true, "throughput ratio");
      }
    }
    for (String traffic : new String[] {"RETURNING", "NEW"}) {
      Map<String, String> p = Map.of("traffic", traffic);
      ratioGoal("select (64 replicas, 512-block prompt) ≤ 2× hashing it, " + traffic,
          find("SelectVsHashBenchmark.select", p), find("SelectVsHashBenchmark.hash", p), 2.0,
          false, "select / hash");
      Map<String, String> q = with(sel, "traffic", traffic);
      ratioGoal("select at 1,024 replicas ≤ 16× at 64, " + traffic,
          find("SelectBenchmark.select", with(q, "replicas", "1024")),
          find("SelectBenchmark.select", q), 16.0, false, "1024 / 64");
      ratioGoal("select with a 10M-block index ≤ 2× with 10K, " + traffic,
          find("SelectBenchmark.select", with(q, "indexBlocks", "10000000")),
          find("SelectBenchmark.select", with(q, "indexBlocks", "10000")), 2.0, false,
          "10M / 10K");
    }
    Matcher m = PER_ENTRY.matcher(footprint);
    Matcher b = BOUND.matcher(footprint);
    if (m.find()) {
      double perEntry = Double.parseDouble(m.group(1));
      goal("≤ 64 B of heap per prefix index entry at 1M entries", num(perEntry) + " B/entry",
          perEntry <= 64);
    }
    if (b.find()) {
      goal("prefix index bound holds after 10× the bound in inserts", b.group(1),
          b.group(1).equals("yes"));
    }
    redisGoals();
  }

  private void redisGoals() {
    if (redisStats.isEmpty()) {
      goal("Redis goals", "not run (no redis-server)", null);
      return;
    }
    RunResult control = find("RedisSelectBenchmark.lettuceGet", Map.of());
    for (String line : redisStats) {
      String[] f = line.trim().split(" ");
      long cache = Long.parseLong(f[0]);
      double perDecision = Long.parseLong(f[2]) / (double) Long.parseLong(f[3]);
      double limit = cache > 0 ? 0.2 : 1.0;
      goal(String.format(Locale.ROOT, "Redis: ≤ %.1f command per decision, local cache %s",
          limit, cache > 0 ? "on (" + cache + ")" : "off"),
          String.format(Locale.ROOT, "%.3f (%s commands / %s decisions, %s degraded)",
              perDecision, f[2], f[3], f.length > 4 ? f[4] : "?"), perDecision <= limit);
      RunResult r = find("RedisSelectBenchmark.select", Map.of("localCacheSize", f[0]));
      if (r != null) {
        double best = r.getPrimaryResult().getStatistics().getMax();
        double mean = r.getPrimaryResult().getScore();
        String controlText = control == null ? "" : String.format(Locale.ROOT,
            "; Lettuce GET control %s/s (%.2f×)", num(control.getPrimaryResult().getScore()),
            control.getPrimaryResult().getScore() / redisGetRps);
        goal(String.format(Locale.ROOT, "Redis: decisions/s ≥ 0.5× redis-benchmark GET at %d "
            + "clients, local cache %s", redisThreads, cache > 0 ? "on" : "off"),
            String.format(Locale.ROOT, "best iteration %s/s, mean %s/s vs GET %s/s: %.2f× "
                + "(mean %.2f×)%s", num(best), num(mean), num(redisGetRps), best / redisGetRps,
                mean / redisGetRps, controlText), best / redisGetRps >= 0.5);
      }
    }
  }

  private void ratioGoal(String goal, RunResult a, RunResult b, double limit, boolean atLeast,
      String what) {
    if (a == null || b == null) {
      goal(goal, "missing", null);
      return;
    }
    Result<?> ca = secondary(a, "cpu.time.norm");
    Result<?> cb = secondary(b, "cpu.time.norm");
    double cpu = ca == null || cb == null ? Double.NaN : ca.getScore() / cb.getScore();
    double fast = fastest(a.getPrimaryResult()) / fastest(b.getPrimaryResult());
    double mean = a.getPrimaryResult().getScore() / b.getPrimaryResult().getScore();
    String figures = String.format(Locale.ROOT, "%s: CPU time %.2f (%s vs %s ns/op); wall clock"
        + " %.2f on the fastest iterations (%s vs %s ns/op), %.2f on means", what, cpu,
        ca == null ? "-" : num(ca.getScore()), cb == null ? "-" : num(cb.getScore()), fast,
        num(fastest(a.getPrimaryResult())), num(fastest(b.getPrimaryResult())), mean);
    double judged = Double.isNaN(cpu) ? fast : cpu;
    goal(goal, figures, atLeast ? judged >= limit : judged <= limit);
  }

  private void goal(String goal, String figures, Boolean holds) {
    goals.append("| ").append(goal).append(" | ").append(figures).append(" | ")
        .append(holds == null ? "n/a" : holds ? "holds" : "**missed**").append(" |\n");
  }

  private RunResult find(String benchmark, Map<String, String> params) {
    for (RunResult r : results) {
      BenchmarkParams bp = r.getParams();
      if (!bp.getBenchmark().endsWith("." + benchmark)) {
        continue;
      }
      boolean all = true;
      for (Map.Entry<String, String> e : params.entrySet()) {
        all &= e.getValue().equals(bp.getParam(e.getKey()));
      }
      if (all) {
        return r;
      }
    }
    return null;
  }

  private static Map<String, String> with(Map<String, String> base, String key, String value) {
    java.util.HashMap<String, String> m = new java.util.HashMap<>(base);
    m.put(key, value);
    return m;
  }

  private static Result<?> secondary(RunResult r, String label) {
    for (Map.Entry<String, Result> e : r.getSecondaryResults().entrySet()) {
      if (e.getKey().endsWith(label)) {
        return e.getValue();
      }
    }
    return null;
  }

  /** The best iteration: the lowest time per operation, or the highest throughput. */
  private static double fastest(Result<?> r) {
    boolean time = r.getScoreUnit().contains("/op");
    return time ? r.getStatistics().getMin() : r.getStatistics().getMax();
  }

  private static String name(BenchmarkParams p) {
    String[] parts = p.getBenchmark().split("\\.");
    return parts[parts.length - 2] + "." + parts[parts.length - 1];
  }

  private static String params(BenchmarkParams p) {
    Collection<String> keys = p.getParamsKeys();
    List<String> kv = new ArrayList<>();
    for (String k : keys) {
      if (!k.equals("redisUri")) {
        kv.add(k + "=" + p.getParam(k));
      }
    }
    if (p.getThreads() > 1) {
      kv.add("threads=" + p.getThreads());
    }
    return String.join(", ", kv);
  }

  private static String num(double v) {
    if (Double.isNaN(v)) {
      return "NaN";
    }
    if (Math.abs(v) >= 100) {
      return String.format(Locale.ROOT, "%,.0f", v);
    }
    return String.format(Locale.ROOT, "%.2f", v);
  }
}
