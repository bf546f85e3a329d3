package io.affinityrouter.examples.simulator.capacity;

import io.affinityrouter.examples.simulator.Simulator;
import io.affinityrouter.examples.simulator.SimulatorOptions;
import io.affinityrouter.examples.simulator.WorkloadFactory;
import io.affinityrouter.examples.simulator.engine.LoadCalibration;
import io.affinityrouter.examples.simulator.engine.RunResult;
import io.affinityrouter.examples.simulator.engine.Simulation;
import io.affinityrouter.examples.simulator.engine.SimulationConfig;
import io.affinityrouter.examples.simulator.fleet.EngineConfig;
import io.affinityrouter.examples.simulator.strategy.StrategyRegistry;
import io.affinityrouter.examples.simulator.workload.Workload;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;

/**
 * The simulator's capacity mode ({@code --capacity}): per workload, each strategy's
 * {@link CapacitySweep} at the workload's p90 TTFT SLO, one run at that capacity, and one at 1.5 ×
 * the real router's capacity, the same rate for every strategy (how each behaves past the point
 * where the router breaks its SLO). Runs are independent simulations, {@code --threads} at once.
 */
public final class CapacityRun {
  /**
   * The strategies a capacity run sweeps unless {@code --strategies} names others: the router and
   * the peers that route by cache or load, at their current defaults and their 2025 ones (random,
   * round-robin and least-request-top-k are dominated by least-request).
   */
  public static final List<String> DEFAULT_STRATEGIES = List.of("affinity-router",
      "least-request", "consistent-hash", "sglang-cache-aware", "sglang-cache-aware-2025", "llm-d",
      "llm-d-2025", "dynamo-kv", "aibrix-prefix");

  /** The rate, as a multiple of the router's capacity, at which behaviour past it is measured. */
  public static final double PAST_CAPACITY = 1.5;

  /**
   * One strategy on one workload.
   *
   * @param strategy its name
   * @param router whether it is the real router or a variant
   * @param peer whether it is a peer emulation
   * @param capacity requests per second at which p90 TTFT reaches the SLO
   * @param atCapacity the run at {@code capacity} (null when the capacity is 0)
   * @param pastCapacity the run at {@link #PAST_CAPACITY} × the router's capacity
   * @param pastRate that rate
   * @param points the sweep's runs, by rate
   */
  public record StrategyCapacity(String strategy, boolean router, boolean peer, double capacity,
      RunResult atCapacity, RunResult pastCapacity, double pastRate,
      List<CapacitySweep.Point> points) {}

  /**
   * One workload's capacities.
   *
   * @param workload its name
   * @param sloMillis its p90 TTFT SLO
   * @param strategies each strategy's figures, in the order selected
   */
  public record WorkloadCapacity(String workload, double sloMillis,
      List<StrategyCapacity> strategies) {

    /** The highest capacity among the peers (0 if none ran). */
    public double bestPeerCapacity() {
      double best = 0;
      for (StrategyCapacity s : strategies) {
        if (s.peer()) {
          best = Math.max(best, s.capacity());
        }
      }
      return best;
    }

    /** The name of the peer with the highest capacity, or "" if none ran. */
    public String bestPeer() {
      String name = "";
      double best = -1;
      for (StrategyCapacity s : strategies) {
        if (s.peer() && s.capacity() > best) {
          best = s.capacity();
          name = s.strategy();
        }
      }
      return name;
    }
  }

  private CapacityRun() {}

  /** The strategies a capacity run of {@code o} sweeps. */
  public static List<StrategyRegistry.Entry> strategies(SimulatorOptions o,
      StrategyRegistry registry) {
    if (!o.strategies().equals(List.of("all"))) {
      return registry.select(o.strategies());
    }
    List<StrategyRegistry.Entry> out = new ArrayList<>(registry.select(DEFAULT_STRATEGIES));
    for (StrategyRegistry.Entry e : registry.all()) {
      if (registry.isRouter(e.name()) && !DEFAULT_STRATEGIES.contains(e.name())
          && !e.name().equals("affinity-router-nosess")) {
        out.add(e);
      }
    }
    return out;
  }

  /** Runs every workload of {@code o}; progress goes to {@code log}. */
  public static List<WorkloadCapacity> run(SimulatorOptions o, Consumer<String> log) {
    StrategyRegistry registry = Simulator.registry(o);
    List<StrategyRegistry.Entry> strategies = strategies(o, registry);
    EngineConfig engine = EngineConfig.defaults().withKvBlocks(o.kvBlocks());
    List<WorkloadCapacity> out = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(o.threads());
    try {
      for (String name : o.allWorkloads()) {
        out.add(workload(name, o, engine, registry, strategies, pool, log));
      }
    } finally {
      pool.shutdownNow();
    }
    return out;
  }

  private static WorkloadCapacity workload(String name, SimulatorOptions o, EngineConfig engine,
      StrategyRegistry registry, List<StrategyRegistry.Entry> strategies, ExecutorService pool,
      Consumer<String> log) {
    Workload raw = WorkloadFactory.raw(name, o);
    int serving = Simulator.servingReplicas(o);
    double start = o.rate() > 0 ? o.rate() : serving
        * LoadCalibration.requestsPerSecond(raw, engine, WorkloadFactory.CALIBRATION_SAMPLE);
    double slo = o.sloP90Millis(name);
    log.accept(String.format(Locale.ROOT, "capacity %s: %d requests, p90 TTFT SLO %.0f ms, "
        + "sweeps start at %.2f req/s", name, raw.size(), slo, start));
    List<Future<CapacitySweep.Result>> sweeps = new ArrayList<>();
    for (StrategyRegistry.Entry s : strategies) {
      sweeps.add(pool.submit(() -> new CapacitySweep(slo,
          rate -> runAt(name, raw, o, engine, s, rate, log)).sweep(start)));
    }
    List<CapacitySweep.Result> results = new ArrayList<>();
    for (Future<CapacitySweep.Result> f : sweeps) {
      results.add(get(f));
    }
    double ours = 0;
    for (int i = 0; i < strategies.size(); i++) {
      if (registry.isRouter(strategies.get(i).name())) {
        ours = results.get(i).capacity();
        break;
      }
    }
    double past = PAST_CAPACITY * (ours > 0 ? ours : start);
    List<Future<RunResult>> atCap = new ArrayList<>();
    List<Future<RunResult>> atPast = new ArrayList<>();
    for (int i = 0; i < strategies.size(); i++) {
      StrategyRegistry.Entry s = strategies.get(i);
      double cap = results.get(i).capacity();
      atCap.add(cap > 0 ? pool.submit(() -> runAt(name, raw, o, engine, s, cap, log)) : null);
      atPast.add(pool.submit(() -> runAt(name, raw, o, engine, s, past, log)));
    }
    List<StrategyCapacity> out = new ArrayList<>();
    for (int i = 0; i < strategies.size(); i++) {
      String s = strategies.get(i).name();
      out.add(new StrategyCapacity(s, registry.isRouter(s), registry.isPeer(s),
          results.get(i).capacity(), atCap.get(i) == null ? null : get(atCap.get(i)),
          get(atPast.get(i)), past, results.get(i).points()));
    }
    return new WorkloadCapacity(name, slo, out);
  }

  private static RunResult runAt(String name, Workload raw, SimulatorOptions o,
      EngineConfig engine, StrategyRegistry.Entry s, double rate, Consumer<String> log) {
    Workload w = WorkloadFactory.atRate(name, raw, o, rate);
    SimulationConfig config = Simulator.config(o, w, engine);
    long t0 = System.nanoTime();
    RunResult r = Simulation.run(w, s, config, line -> { });
    log.accept(String.format(Locale.ROOT,
        "  %-22s %-22s %7.2f req/s  p90 %8.0f ms  hit %5.1f%%  served %6.2f req/s  (%.1f s)",
        s.name(), name, rate, r.ttftMillis(90), 100 * r.hitRate(), r.requestsPerSecond(),
        (System.nanoTime() - t0) / 1e9));
    return r;
  }

  private static <T> T get(Future<T> f) {
    try {
      return f.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException re) {
        throw re;
      }
      throw new IllegalStateException(e.getCause());
    }
  }
}
