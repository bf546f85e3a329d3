package io.affinityrouter.examples.simulator;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The simulator's command-line options ({@code --name value} pairs), with their defaults.
 *
 * @param workloads workloads to run: {@code mooncake-conversation}, {@code mooncake-synthetic},
 *     {@code ragpulse}, {@code agents}, {@code agents-hot} (default: mooncake-conversation,agents)
 * @param strategies strategy names, or {@code all} (default)
 * @param scenario {@code steady} (default), {@code scale-out}, {@code replica-lost}, {@code asleep}
 *     (the model asleep on a quarter of the replicas)
 * @param traces the traces folder (default {@code ../shared/traces}, relative to the working
 *     directory: the project root when run with Maven from there)
 * @param replicas replicas in the fleet (default 8)
 * @param gateways gateways (default 1; the scale-out scenario uses 4 unless given)
 * @param load target utilisation of the fleet (default 0.75; see {@code LoadCalibration})
 * @param limit the most requests read from a trace (default: all)
 * @param agentSessions sessions of the agent workload (default 800)
 * @param scrapeMillis scrape interval (default 100)
 * @param kvBlocks KV blocks per replica (default 67,659)
 * @param seed the seed of this run (default 42; the first of {@code seeds})
 * @param variants variants of the real router to add, {@code name=option:value,...;name2=...}
 *     (default none)
 * @param out folder for {@code results.csv} and {@code report.html} (default
 *     {@code target/simulator})
 * @param seeds the seeds to run ({@code --seed N}, or {@code --seeds 1-10} / {@code --seeds 1,4,7}
 *     for a paired comparison over several); never empty
 */
public record SimulatorOptions(List<String> workloads, List<String> strategies, String scenario,
    Path traces, int replicas, int gateways, double load, int limit, int agentSessions,
    long scrapeMillis, long kvBlocks, long seed, String variants, Path out, List<Long> seeds) {

  /** The most seeds {@code --seeds} accepts: {@value}. */
  public static final int MAX_SEEDS = 1000;

  /** Validates and copies {@code seeds}. */
  public SimulatorOptions {
    seeds = List.copyOf(seeds);
    if (seeds.isEmpty() || seeds.get(0) != seed) {
      throw new IllegalArgumentException("seeds: " + seeds + " (expected: starting with " + seed
          + ")");
    }
  }

  /** These options for one run with {@code seed}. */
  public SimulatorOptions withSeed(long seed) {
    return new SimulatorOptions(workloads, strategies, scenario, traces, replicas, gateways, load,
        limit, agentSessions, scrapeMillis, kvBlocks, seed, variants, out, List.of(seed));
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
    int agentSessions = 800;
    long scrapeMillis = 100;
    long kvBlocks = 67_659;
    long seed = 42;
    List<Long> seeds = null;
    boolean seedGiven = false;
    String variants = "";
    Path out = Path.of("target/simulator");
    List<String> tokens = new ArrayList<>();
    for (String a : args) {
      tokens.addAll(Arrays.asList(a.trim().split("\\s+")));
    }
    tokens.removeIf(String::isEmpty);
    for (int i = 0; i < tokens.size(); i += 2) {
      String name = tokens.get(i);
      if (i + 1 >= tokens.size()) {
        throw new IllegalArgumentException(name + ": no value (expected: --name value)");
      }
      String v = tokens.get(i + 1);
      switch (name) {
        case "--workloads" -> workloads = List.of(v.split(","));
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
        case "--seeds" -> seeds = parseSeeds(v);
        case "--variants" -> variants = v;
        case "--out" -> out = Path.of(v);
        default -> throw new IllegalArgumentException(name + ": unknown option (expected: one of "
            + "--workloads --strategies --scenario --traces --replicas --gateways --load --limit "
            + "--agent-sessions --scrape-ms --kv-blocks --seed --seeds --variants --out)");
      }
    }
    if (!List.of("steady", "scale-out", "replica-lost", "asleep").contains(scenario)) {
      throw new IllegalArgumentException(
          "--scenario: " + scenario + " (expected: steady, scale-out, replica-lost or asleep)");
    }
    if (seeds != null && seedGiven) {
      throw new IllegalArgumentException("--seed and --seeds: both given (expected: one of them)");
    }
    if (seeds == null) {
      seeds = List.of(seed);
    }
    seed = seeds.get(0);
    if (gateways < 0) {
      gateways = scenario.equals("scale-out") ? 4 : 1;
    }
    return new SimulatorOptions(workloads, strategies, scenario, traces, replicas, gateways, load,
        limit, agentSessions, scrapeMillis, kvBlocks, seed, variants, out, seeds);
  }

  private static long parseSeed(String name, String v) {
    try {
      return Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + ": " + v + " (expected: an integer)", e);
    }
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
