package io.affinityrouter.jmh;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * A short profile of every benchmark (one fork, 2 × 1 s warm-up, 3 × 1 s measurement, {@code -prof
 * gc} and {@link CpuTimeProfiler}), run as a few JMH runs with the parameter sweeps the goals need, then the index footprint
 * ({@code IndexFootprint}, in its own JVM). Writes one JMH JSON file per run and {@code quick.md}: a
 * table of every result and the goals with their verdicts. Used by
 * {@code jmh/run-quick.sh}, which also starts the Redis server and runs {@code redis-benchmark}.
 *
 * <p>Ratios are computed in this one run from CPU time per operation (on a shared machine, waiting
 * for a core inflates wall-clock time but not CPU time), with the wall-clock ratios beside them.
 *
 * <pre>
 * java -cp jmh/target/benchmarks.jar io.affinityrouter.jmh.QuickProfile OUT_DIR \
 *     [REDIS_GET_RPS REDIS_THREADS]
 * </pre>
 */
public final class QuickProfile {
  private final Path out;
  private final List<RunResult> results = new ArrayList<>();

  private QuickProfile(Path out) {
    this.out = out;
  }

  /**
   * Runs the profile.
   *
   * @param args the output directory; optionally the {@code redis-benchmark -t get} rate and its
   *     client count, which also enables the Redis benchmark (a server on 127.0.0.1:6390)
   */
  public static void main(String[] args) throws RunnerException, IOException, InterruptedException {
    if (args.length != 1 && args.length != 3) {
      throw new IllegalArgumentException(
          "args: " + args.length + " (expected: OUT_DIR [REDIS_GET_RPS REDIS_THREADS])");
    }
    Path out = Path.of(args[0]);
    Files.createDirectories(out);
    QuickProfile p = new QuickProfile(out);
    Instant started = Instant.now().truncatedTo(ChronoUnit.SECONDS);

    p.run("hashing", "\\.BlockHasherBenchmark\\.", o -> o.param("promptTokens", "1024", "8192"));
    p.run("select-vs-hash", "\\.SelectVsHashBenchmark\\.", o -> o);
    p.run("select-replicas", "\\.SelectBenchmark\\.", o -> o.param("holding", "false").param("replicas", "8", "64", "1024")
        .param("promptTokens", "8192").param("indexBlocks", "1000000")
        .param("traffic", "RETURNING", "NEW"));
    p.run("select-sessionless", "\\.SelectBenchmark\\.", o -> o.param("holding", "false").param("replicas", "64")
        .param("promptTokens", "8192").param("indexBlocks", "1000000")
        .param("traffic", "SESSIONLESS"));
    p.run("select-index", "\\.SelectBenchmark\\.", o -> o.param("holding", "false").param("replicas", "64")
        .param("promptTokens", "8192").param("indexBlocks", "10000", "10000000")
        .param("traffic", "RETURNING", "NEW"));
    p.run("select-prompt", "\\.SelectBenchmark\\.", o -> o.param("holding", "false").param("replicas", "64")
        .param("promptTokens", "1024", "32768").param("indexBlocks", "1000000")
        .param("traffic", "RETURNING"));
    p.run("select-cold", "\\.SelectBenchmark\\.", o -> o.param("holding", "false").param("replicas", "64", "1024")
        .param("promptTokens", "8192").param("indexBlocks", "1000000")
        .param("traffic", "COLD"));
    p.run("select-holding", "\\.SelectBenchmark\\.", o -> o.param("holding", "true")
        .param("replicas", "64").param("promptTokens", "8192").param("indexBlocks", "1000000")
        .param("traffic", "RETURNING", "SESSIONLESS"));
    p.run("prefix-index", "\\.PrefixIndexBenchmark\\.", o -> o);
    p.run("concurrency", "\\.ConcurrentSelectBenchmark\\.", o -> o);

    double redisGetRps = Double.NaN;
    int redisThreads = 0;
    Path redisStats = out.resolve("redis-stats.txt");
    if (args.length == 3) {
      redisGetRps = Double.parseDouble(args[1]);
      redisThreads = Integer.parseInt(args[2]);
      Files.deleteIfExists(redisStats);
      int threads = redisThreads;
      p.run("redis", "\\.RedisSelectBenchmark\\.select$", o -> o.threads(threads)
          .jvmArgsAppend("-Dar.bench.redisStats=" + redisStats.toAbsolutePath()));
      p.run("redis-control", "\\.RedisSelectBenchmark\\.lettuceGet$", o -> o.threads(threads)
          .param("localCacheSize", "0"));
    }
    String footprint = Footprint.run();

    Report report = new Report(p.results, footprint, redisGetRps, redisThreads,
        Files.exists(redisStats) ? Files.readAllLines(redisStats) : List.of());
    String md = "# Quick profile, " + started + "\n\n" + report.markdown();
    Files.writeString(out.resolve("quick.md"), md, StandardCharsets.UTF_8);
    System.out.println(md);
  }

  private interface Customizer {
    ChainedOptionsBuilder apply(ChainedOptionsBuilder o);
  }

  private void run(String name, String include, Customizer custom) throws RunnerException {
    ChainedOptionsBuilder o = new OptionsBuilder()
        .include(include)
        .forks(1)
        .warmupIterations(2)
        .warmupTime(TimeValue.seconds(1))
        .measurementIterations(3)
        .measurementTime(TimeValue.seconds(1))
        .addProfiler(GCProfiler.class)
        .addProfiler(CpuTimeProfiler.class)
        .resultFormat(ResultFormatType.JSON)
        .result(out.resolve("quick-" + name + ".json").toString());
    Collection<RunResult> r = new Runner(custom.apply(o).build()).run();
    results.addAll(r);
    System.out.printf(Locale.ROOT, "quick profile: %s done (%d results)%n", name, r.size());
  }
}
