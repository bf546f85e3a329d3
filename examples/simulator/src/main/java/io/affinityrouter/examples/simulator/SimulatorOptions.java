package io.affinityrouter.examples.simulator;

import io.affinityrouter.examples.simulator.engine.SimulationConfig;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The simulator's command-line options ({@code --name value} pairs), with their defaults.
 *
 * @param workloads workloads to run: {@code mooncake-conversation}, {@code mooncake-synthetic},
 *     {@code ragpulse}, {@code agents}, {@code agents-hot}, {@code agents-long},
 *     {@code agents-long-hot}, {@code agents-long-pressure}, or a Mooncake-format {@code .jsonl} file (default:
 *     mooncake-conversation,agents)
 * @param strategies strategy names, or {@code all} (default)
 * @param scenario {@code steady} (default), {@code scale-out}, {@code replica-lost}, {@code asleep}
 *     (the model asleep on a quarter of the replicas)
 * @param traces the traces folder (default {@code ../shared/traces}, relative to the working
 *     directory: the project root when run with Maven from there)
 * @param replicas replicas in the fleet (default 8)
 * @param gateways gateways (default 1; the scale-out scenario uses 4 unless given)
 * @param load target utilisation of the fleet (default 0.75; see {@code LoadCalibration})
 * @param limit the most requests read from a trace (default: all)
 * @param agentSessions sessions of each agent workload, or {@code 0} (default) for the preset's own:
 *     800 for {@code agents} and {@code agents-hot} (4,000 in capacity mode), 400 for
 *     {@code agents-long} and {@code agents-long-hot}, 800 for {@code agents-long-pressure}
 * @param scrapeMillis scrape interval (default 100)
 * @param kvBlocks KV blocks per replica (default 67,659)
 * @param seed the seed of this run (default 42; the first of {@code seeds})
 * @param variants variants of the real router to add, {@code name=option:value,...;name2=...}
 *     (default none)
 * @param out folder for {@code results.csv} and {@code report.html} (default
 *     {@code target/simulator})
 * @param seeds the seeds to run ({@code --seed N}, or {@code --seeds 1-10} / {@code --seeds 1,4,7}
 *     for a paired comparison over several; in capacity mode {@code --seeds N} is a count, the
 *     seeds from {@code --seed} on, default {@value #CAPACITY_SEEDS}); never empty
 * @param rate requests per second offered to the fleet, overriding {@code load} ({@code --rate};
 *     0 when not given)
 * @param traceFiles Mooncake-format JSONL files, each run as a workload named after the file
 *     ({@code --trace}, repeatable); when given without {@code --workloads}, only they run
 * @param capacity whether to measure capacity at the latency SLO ({@code --capacity}; see
 *     {@code capacity.CapacitySweep})
 * @param sloP90Millis the p90 TTFT SLO of every workload ({@code --slo-p90-ms}); 0 for each
 *     workload's own ({@link #sloP90Millis(String)})
 * @param threads simulations run at once in capacity mode ({@code --threads}; default: the
 *     available processors)
 * @param spreadTies whether a trace's requests that share a timestamp arrive spread uniformly over
 *     the trace's tick (default; {@code --no-spread} keeps them simultaneous; see
 *     {@code Workload.spreadTies})
 * @param front how the load balancer in front of several gateways picks a request's gateway
 *     ({@code --front request}, the default: by request id; {@code --front session}: by session
 *     id, so a session's turns all reach one gateway)
 */
public record SimulatorOptions(List<String> workloads, List<String> strategies, String scenario,
    Path traces, int replicas, int gateways, double load, int limit, int agentSessions,
    long scrapeMillis, long kvBlocks, long seed, String variants, Path out, List<Long> seeds,
    double rate, List<Path> traceFiles, boolean capacity, double sloP90Millis, int threads,
    boolean spreadTies, SimulationConfig.Front front) {

  /** Seeds of a capacity run unless {@code --seeds} says otherwise: {@value}. */
  public static final int CAPACITY_SEEDS = 3;

  /**
   * Sessions of the short-turn agent presets in capacity mode: {@value} (800 barely load a fleet
   * whatever the rate: too few of them overlap).
   */
  public static final int CAPACITY_AGENT_SESSIONS = 4000;
  /** The p90 TTFT SLO of short agent turns, ms: {@value}. */
  public static final double SHORT_TURN_SLO_MILLIS = 300;
  /** The p90 TTFT SLO of every other workload (traces, RAG, long contexts), ms: {@value}. */
  public static final double DEFAULT_SLO_MILLIS = 2000;

  /**
   * The workloads to run: {@link #workloads()} then one per {@link #traceFiles()}, named after the
   * file without {@code .jsonl}.
   */
  public List<String> allWorkloads() {
    List<String> all = new ArrayList<>(workloads);
    for (Path f : traceFiles) {
      all.add(traceName(f));
    }
    return all;
  }

  /** The trace file behind a workload name from {@link #allWorkloads()}, or null. */
  public Path traceFile(String workload) {
    for (Path f : traceFiles) {
      if (traceName(f).equals(workload)) {
        return f;
      }
    }
    return null;
  }

  /** A trace file's workload name: its file name without {@code .jsonl}. */
  public static String traceName(Path file) {
    String n = file.getFileName().toString();
    return n.endsWith(".jsonl") ? n.substring(0, n.length() - 6) : n;
  }

  /**
   * The p90 TTFT SLO of {@code workload}, ms: {@code --slo-p90-ms} if given, else
   * {@value #SHORT_TURN_SLO_MILLIS} for short agent turns ({@code agents}, {@code agents-hot}) and
   * {@value #DEFAULT_SLO_MILLIS} for the rest.
   */
  public double sloP90Millis(String workload) {
    if (sloP90Millis > 0) {
      return sloP90Millis;
    }
    return workload.equals("agents") || workload.equals("agents-hot")
        ? SHORT_TURN_SLO_MILLIS : DEFAULT_SLO_MILLIS;
  }

  /** The most seeds {@code --seeds} accepts: {@value}. */
  public static final int MAX_SEEDS = 1000;

  /** Validates and copies {@code seeds}. */
  public SimulatorOptions {
    seeds = List.copyOf(seeds);
    traceFiles = List.copyOf(traceFiles);
    if (seeds.isEmpty() || seeds.get(0) != seed) {
      throw new IllegalArgumentException("seeds: " + seeds + " (expected: starting with " + seed
          + ")");
    }
  }

  /** These options for one run with {@code seed}. */
  public SimulatorOptions withSeed(long seed) {
    return new SimulatorOptions(workloads, strategies, scenario, traces, replicas, gateways, load,
        limit, agentSessions, scrapeMillis, kvBlocks, seed, variants, out, List.of(seed), rate,
        traceFiles, capacity, sloP90Millis, threads, spreadTies, front);
  }

  /**
   * Parses {@code --name value} arguments.
   *
   * @throws IllegalArgumentException on an unknown option, a missing value or a bad number
   */
  public static SimulatorOptions parse(String[] args) {
    List<String> workloads = List.of("mooncake-conversation", "agents");
    List<String> strategies = List.of("all");
    String scenario = "steady";
    Path traces = Path.of("../shared/traces");
    int replicas = 8;
    int gateways = -1;
    double load = 0.75;
    int limit = Integer.MAX_VALUE;
    // 0: each agent preset's own session count
    int agentSessions = 0;
    long scrapeMillis = 100;
    long kvBlocks = 67_659;
    long seed = 42;
    List<Long> seeds = null;
    String seedsArg = null;
    boolean spreadTies = true;
    boolean seedGiven = false;
    String variants = "";
    Path out = Path.of("target/simulator");
    double rate = 0;
    List<Path> traceFiles = new ArrayList<>();
    boolean capacity = false;
    boolean workloadsGiven = false;
    double slo = 0;
    int threads = Runtime.getRuntime().availableProcessors();
    SimulationConfig.Front front = SimulationConfig.Front.REQUEST;
    List<String> tokens = new ArrayList<>();
    for (String a : args) {
      tokens.addAll(Arrays.asList(a.trim().split("\\s+")));
    }
    tokens.removeIf(String::isEmpty);
    for (int i = 0; i < tokens.size(); i += 2) {
      String name = tokens.get(i);
      if (name.equals("--capacity")) { // a flag: no value
        capacity = true;
        i--;
        continue;
      }
      if (name.equals("--no-spread")) {
        spreadTies = false;
        i--;
        continue;
      }
      if (i + 1 >= tokens.size()) {
        throw new IllegalArgumentException(name + ": no value (expected: --name value)");
      }
      String v = tokens.get(i + 1);
      switch (name) {
        case "--workloads" -> {
          workloads = List.of(v.split(","));
          workloadsGiven = true;
        }
        case "--rate" -> rate = positiveDouble(name, v);
        case "--trace" -> traceFiles.add(Path.of(v));
        case "--slo-p90-ms" -> slo = positiveDouble(name, v);
        case "--threads" -> threads = positiveInt(name, v);
        case "--strategies" -> strategies = List.of(v.split(","));
        case "--scenario" -> scenario = v;
        case "--traces" -> traces = Path.of(v);
        case "--replicas" -> replicas = positiveInt(name, v);
        case "--gateways" -> gateways = positiveInt(name, v);
        case "--load" -> load = positiveDouble(name, v);
        case "--limit" -> limit = positiveInt(name, v);
        case "--agent-sessions" -> agentSessions = positiveInt(name, v);
        case "--scrape-ms" -> scrapeMillis = positiveInt(name, v);
        case "--kv-blocks" -> kvBlocks = positiveInt(name, v);
        case "--seed" -> {
          seed = parseSeed(name, v);
          seedGiven = true;
        }
        case "--seeds" -> seedsArg = v;
        case "--variants" -> variants = v;
        case "--out" -> out = Path.of(v);
        case "--front" -> front = parseFront(v);
        default -> throw new IllegalArgumentException(name + ": unknown option (expected: one of "
            + "--workloads --strategies --scenario --traces --replicas --gateways --load --limit "
            + "--agent-sessions --scrape-ms --kv-blocks --seed --seeds --variants --out --rate "
            + "--trace --capacity --slo-p90-ms --threads --no-spread --front)");
      }
    }
    if (!List.of("steady", "scale-out", "replica-lost", "asleep").contains(scenario)) {
      throw new IllegalArgumentException(
          "--scenario: " + scenario + " (expected: steady, scale-out, replica-lost or asleep)");
    }
    if (capacity) { // a count of seeds from --seed on, or a list or range
      seeds = seedsArg == null ? countedSeeds(seed, CAPACITY_SEEDS)
          : seedsArg.matches("\\d+") ? countedSeeds(seed, positiveInt("--seeds", seedsArg))
          : parseSeeds(seedsArg);
    } else if (seedsArg != null) {
      if (seedGiven) {
        throw new IllegalArgumentException(
            "--seed and --seeds: both given (expected: one of them)");
      }
      seeds = parseSeeds(seedsArg);
    } else {
      seeds = List.of(seed);
    }
    if (!traceFiles.isEmpty() && !workloadsGiven) {
      workloads = List.of();
    }
    seed = seeds.get(0);
    if (gateways < 0) {
      gateways = scenario.equals("scale-out") ? 4 : 1;
    }
    return new SimulatorOptions(workloads, strategies, scenario, traces, replicas, gateways, load,
        limit, agentSessions, scrapeMillis, kvBlocks, seed, variants, out, seeds, rate, traceFiles,
        capacity, slo, threads, spreadTies, front);
  }

  private static SimulationConfig.Front parseFront(String v) {
    for (SimulationConfig.Front f : SimulationConfig.Front.values()) {
      if (f.label().equals(v.toLowerCase(Locale.ROOT))) {
        return f;
      }
    }
    throw new IllegalArgumentException("--front: " + v + " (expected: request or session)");
  }

  private static long parseSeed(String name, String v) {
    try {
      return Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + ": " + v + " (expected: an integer)", e);
    }
  }

  private static List<Long> countedSeeds(long first, int count) {
    if (count > MAX_SEEDS) {
      throw new IllegalArgumentException("--seeds: " + count + " (expected: at most " + MAX_SEEDS
          + " seeds)");
    }
    List<Long> out = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      out.add(first + i);
    }
    return out;
  }

  /** {@code 1-10} (inclusive) or {@code 1,4,7}: distinct seeds, at most {@link #MAX_SEEDS}. */
  private static List<Long> parseSeeds(String v) {
    List<Long> out = new ArrayList<>();
    int dash = v.indexOf('-', 1);
    if (dash > 0 && !v.contains(",")) {
      long from = parseSeed("--seeds", v.substring(0, dash));
      long to = parseSeed("--seeds", v.substring(dash + 1));
      if (to < from || to - from < 0 || to - from >= MAX_SEEDS) {
        throw new IllegalArgumentException("--seeds: " + v + " (expected: FROM-TO with FROM <= TO"
            + " and at most " + MAX_SEEDS + " seeds)");
      }
      for (long s = from; s <= to; s++) {
        out.add(s);
      }
      return out;
    }
    for (String part : v.split(",")) {
      long s = parseSeed("--seeds", part);
      if (out.contains(s)) {
        throw new IllegalArgumentException("--seeds: " + v + " (expected: distinct seeds)");
      }
      out.add(s);
    }
    if (out.size() > MAX_SEEDS) {
      throw new IllegalArgumentException("--seeds: " + out.size() + " seeds (expected: at most "
          + MAX_SEEDS + ")");
    }
    return out;
  }

  private static int positiveInt(String name, String v) {
    int x;
    try {
      x = Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + ": " + v + " (expected: an integer > 0)", e);
    }
    if (x <= 0) {
      throw new IllegalArgumentException(name + ": " + v + " (expected: > 0)");
    }
    return x;
  }

  private static double positiveDouble(String name, String v) {
    double x;
    try {
      x = Double.parseDouble(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + ": " + v + " (expected: a number > 0)", e);
    }
    if (!(x > 0) || Double.isInfinite(x)) {
      throw new IllegalArgumentException(name + ": " + v + " (expected: > 0)");
    }
    return x;
  }
}
