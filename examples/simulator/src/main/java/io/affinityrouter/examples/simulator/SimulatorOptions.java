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
 * @param seed the seed (default 42)
 * @param variants variants of the real router to add, {@code name=option:value,...;name2=...}
 *     (default none)
 * @param out folder for {@code results.csv} and {@code report.html} (default
 *     {@code target/simulator})
 */
public record SimulatorOptions(List<String> workloads, List<String> strategies, String scenario,
    Path traces, int replicas, int gateways, double load, int limit, int agentSessions,
    long scrapeMillis, long kvBlocks, long seed, String variants, Path out) {

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
        case "--seed" -> seed = Long.parseLong(v);
        case "--variants" -> variants = v;
        case "--out" -> out = Path.of(v);
        default -> throw new IllegalArgumentException(name + ": unknown option (expected: one of "
            + "--workloads --strategies --scenario --traces --replicas --gateways --load --limit "
            + "--agent-sessions --scrape-ms --kv-blocks --seed --variants --out)");
      }
    }
    if (!List.of("steady", "scale-out", "replica-lost", "asleep").contains(scenario)) {
      throw new IllegalArgumentException(
          "--scenario: " + scenario + " (expected: steady, scale-out, replica-lost or asleep)");
    }
    if (gateways < 0) {
      gateways = scenario.equals("scale-out") ? 4 : 1;
    }
    return new SimulatorOptions(workloads, strategies, scenario, traces, replicas, gateways, load,
        limit, agentSessions, scrapeMillis, kvBlocks, seed, variants, out);
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
