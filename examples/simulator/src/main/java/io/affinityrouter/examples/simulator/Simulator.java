package io.affinityrouter.examples.simulator;

import io.affinityrouter.examples.simulator.capacity.CapacityReporter;
import io.affinityrouter.examples.simulator.capacity.CapacityRun;
import io.affinityrouter.examples.simulator.engine.FleetEvent;
import io.affinityrouter.examples.simulator.engine.RunResult;
import io.affinityrouter.examples.simulator.engine.Simulation;
import io.affinityrouter.examples.simulator.engine.SimulationConfig;
import io.affinityrouter.examples.simulator.fleet.EngineConfig;
import io.affinityrouter.examples.simulator.report.CsvReporter;
import io.affinityrouter.examples.simulator.report.HtmlReporter;
import io.affinityrouter.examples.simulator.report.PairedReporter;
import io.affinityrouter.examples.simulator.report.TableReporter;
import io.affinityrouter.examples.simulator.strategy.StrategyRegistry;
import io.affinityrouter.examples.simulator.workload.Workload;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The fleet simulator's command line: builds each workload, runs every selected strategy on it over
 * the same simulated fleet, prints the table on stdout, progress on stderr, and writes
 * {@code results.csv} and {@code report.html} to the output folder. With several seeds
 * ({@code --seeds 1-10}), runs each in turn and ends with a paired comparison of the real router
 * with every other strategy ({@link #runSeeds}). Options: {@link SimulatorOptions}.
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
    if (String.join(" ", args).matches("(^|.*\\s)--lifecycle(\\s.*|$)")) {
      try { // the multi-model fleet: static deployments against the model lifecycle
        io.affinityrouter.examples.simulator.lifecycle.LifecycleRun.main(args,
            System.out::print, System.err::println);
      } catch (IllegalArgumentException e) {
        System.err.println(e.getMessage());
        System.exit(2);
      }
      return;
    }
    SimulatorOptions o;
    try {
      o = SimulatorOptions.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    if (o.capacity()) {
      List<CapacityRun.WorkloadCapacity> capacities = CapacityRun.run(o, System.err::println);
      System.out.print(CapacityReporter.table(capacities));
      CapacityReporter.write(capacities, o.out());
      System.err.println("wrote " + o.out().resolve(CapacityReporter.CSV) + ", "
          + o.out().resolve(CapacityReporter.POINTS) + " and "
          + o.out().resolve(CapacityReporter.SVG));
      return;
    }
    if (o.seeds().size() > 1) {
      runSeeds(o);
      return;
    }
    List<RunResult> results = run(o);
    System.out.print(TableReporter.format(results));
    CsvReporter.write(results, o.out().resolve("results.csv"));
    HtmlReporter.write(results, o.out().resolve("report.html"));
    System.err.println("wrote " + o.out().resolve("results.csv") + " and "
        + o.out().resolve("report.html"));
  }

  /**
   * Runs every seed of {@code o} in turn: prints each seed's table, writes its {@code results.csv}
   * and {@code report.html} under {@code seed-N/} of the output folder, then prints the paired
   * comparison ({@link PairedReporter}) of the baseline with every other strategy and writes it to
   * {@code paired.csv}. The baseline is the first selected strategy that is the real router (or a
   * variant of it), else the first selected strategy.
   *
   * @return every run's figures
   */
  public static List<PairedReporter.Sample> runSeeds(SimulatorOptions o) {
    StrategyRegistry registry = registry(o);
    List<PairedReporter.Sample> samples = new ArrayList<>();
    String baseline = null;
    for (long seed : o.seeds()) {
      System.err.println("seed " + seed);
      List<RunResult> results = run(o.withSeed(seed));
      System.out.printf("%n# seed %d%n", seed);
      System.out.print(TableReporter.format(results));
      Path dir = o.out().resolve("seed-" + seed);
      CsvReporter.write(results, dir.resolve("results.csv"));
      HtmlReporter.write(results, dir.resolve("report.html"));
      for (RunResult r : results) {
        samples.add(PairedReporter.Sample.of(seed, r));
        if (baseline == null && registry.isRouter(r.strategy())) {
          baseline = r.strategy();
        }
      }
    }
    if (baseline == null) {
      baseline = samples.isEmpty() ? "" : samples.get(0).strategy();
    }
    System.out.print(PairedReporter.format(samples, baseline, registry::isPeer));
    PairedReporter.write(samples, baseline, o.out().resolve("paired.csv"));
    System.err.println("wrote " + o.out().resolve("paired.csv") + " and " + o.out()
        + "/seed-N/{results.csv,report.html}");
    return samples;
  }

  /**
   * The router variant every run with several gateways adds: the default router without the load
   * exchange its binding store gives the gateways (what sharing their queues is worth).
   */
  static final String MULTI_GATEWAY_VARIANT = "affinity-router-noexch=loadExchangeMillis:0";

  /** The strategies of {@code o}: the standard ones, the multi-gateway variant, {@code --variants}. */
  public static StrategyRegistry registry(SimulatorOptions o) {
    StrategyRegistry standard = StrategyRegistry.standard();
    if (o.gateways() > 1) {
      standard = standard.withRouterVariants(MULTI_GATEWAY_VARIANT);
    }
    return standard.withRouterVariants(o.variants());
  }

  /** Runs every selected workload and strategy (with {@code o.seed()}); progress goes to stderr. */
  public static List<RunResult> run(SimulatorOptions o) {
    StrategyRegistry registry = registry(o);
    List<StrategyRegistry.Entry> strategies = new ArrayList<>(
        o.strategies().equals(List.of("all")) ? registry.all() : registry.select(o.strategies()));
    EngineConfig engine = EngineConfig.defaults().withKvBlocks(o.kvBlocks());
    List<RunResult> results = new ArrayList<>();
    for (String name : o.allWorkloads()) {
      Workload w = WorkloadFactory.build(name, o, engine, servingReplicas(o), System.err::println);
      SimulationConfig config = config(o, w, engine);
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

  /** The replicas that serve from the start (ready and awake): the load is set for them. */
  public static int servingReplicas(SimulatorOptions o) {
    return readyReplicas(o) - asleepReplicas(o);
  }

  private static int readyReplicas(SimulatorOptions o) {
    return o.scenario().equals("scale-out") ? o.replicas() - 1 : o.replicas();
  }

  private static int asleepReplicas(SimulatorOptions o) {
    return o.scenario().equals("asleep") ? Math.max(1, o.replicas() / 4) : 0;
  }

  /** The fleet of {@code o}'s scenario for workload {@code w}. */
  public static SimulationConfig config(SimulatorOptions o, Workload w, EngineConfig engine) {
    return new SimulationConfig(o.replicas(), readyReplicas(o), o.gateways(),
        o.scrapeMillis() * 1_000_000L, SimulationConfig.DEFAULT_RETRY_NANOS, engine,
        events(o, w), o.seed()).withAsleep(asleepReplicas(o), SimulationConfig.DEFAULT_WAKE_NANOS)
        .withFront(o.front());
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
