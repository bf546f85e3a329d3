package io.affinityrouter.examples.simulator;

import io.affinityrouter.examples.simulator.engine.FleetEvent;
import io.affinityrouter.examples.simulator.engine.RunResult;
import io.affinityrouter.examples.simulator.engine.Simulation;
import io.affinityrouter.examples.simulator.engine.SimulationConfig;
import io.affinityrouter.examples.simulator.fleet.EngineConfig;
import io.affinityrouter.examples.simulator.report.CsvReporter;
import io.affinityrouter.examples.simulator.report.HtmlReporter;
import io.affinityrouter.examples.simulator.report.TableReporter;
import io.affinityrouter.examples.simulator.strategy.StrategyRegistry;
import io.affinityrouter.examples.simulator.workload.Workload;
import java.util.ArrayList;
import java.util.List;

/**
 * The fleet simulator's command line: builds each workload, runs every selected strategy on it over
 * the same simulated fleet, prints the table on stdout, progress on stderr, and writes
 * {@code results.csv} and {@code report.html} to the output folder. Options: {@link SimulatorOptions}.
 *
 * <pre>
 *   mvn -B -ntp -q install -DskipTests
 *   mvn -B -ntp -q -pl examples/simulator exec:java -Dexec.args="--workloads mooncake-conversation,agents"
 * </pre>
 */
public final class Simulator {
  private Simulator() {}

  /** Runs the simulator. */
  public static void main(String[] args) {
    SimulatorOptions o;
    try {
      o = SimulatorOptions.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    List<RunResult> results = run(o);
    System.out.print(TableReporter.format(results));
    CsvReporter.write(results, o.out().resolve("results.csv"));
    HtmlReporter.write(results, o.out().resolve("report.html"));
    System.err.println("wrote " + o.out().resolve("results.csv") + " and "
        + o.out().resolve("report.html"));
  }

  /** Runs every selected workload and strategy; progress goes to stderr. */
  public static List<RunResult> run(SimulatorOptions o) {
    StrategyRegistry registry = StrategyRegistry.standard().withRouterVariants(o.variants());
    List<StrategyRegistry.Entry> strategies = new ArrayList<>(
        o.strategies().equals(List.of("all")) ? registry.all() : registry.select(o.strategies()));
    EngineConfig engine = EngineConfig.defaults().withKvBlocks(o.kvBlocks());
    int ready = o.scenario().equals("scale-out") ? o.replicas() - 1 : o.replicas();
    int asleep = o.scenario().equals("asleep") ? Math.max(1, o.replicas() / 4) : 0;
    List<RunResult> results = new ArrayList<>();
    for (String name : o.workloads()) {
      // the load is set on the replicas that serve from the start (awake and ready)
      Workload w = WorkloadFactory.build(name, o, engine, ready - asleep, System.err::println);
      SimulationConfig config = new SimulationConfig(o.replicas(), ready, o.gateways(),
          o.scrapeMillis() * 1_000_000L, SimulationConfig.DEFAULT_RETRY_NANOS, engine,
          events(o, w), o.seed()).withAsleep(asleep, SimulationConfig.DEFAULT_WAKE_NANOS);
      for (StrategyRegistry.Entry s : strategies) {
        long t0 = System.nanoTime();
        RunResult r = Simulation.run(w, s, config, System.err::println);
        System.err.printf("  %-22s %-22s hit %5.1f%%  TTFT p99 %8.0f ms  (%.1f s)%n",
            s.name(), name, 100 * r.hitRate(), r.ttftMillis(99), (System.nanoTime() - t0) / 1e9);
        results.add(r);
      }
    }
    return results;
  }

  private static List<FleetEvent> events(SimulatorOptions o, Workload w) {
    long span = w.spanNanos();
    return switch (o.scenario()) {
      case "scale-out" -> List.of(new FleetEvent(span / 3, o.replicas() - 1,
          FleetEvent.Kind.READY));
      case "replica-lost" -> List.of(new FleetEvent(span / 2, 0, FleetEvent.Kind.LOST));
      default -> List.of();
    };
  }
}
