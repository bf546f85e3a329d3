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
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.function.DoubleFunction;
import java.util.function.ToDoubleFunction;
import org.jspecify.annotations.Nullable;

/**
 * The simulator's capacity mode ({@code --capacity}): per workload and seed, each strategy's
 * {@link CapacitySweep} at the workload's p90 TTFT SLO, one run at that capacity, and runs at
 * {@value #PAST_CAPACITY} ×, {@value #FAR_PAST_CAPACITY} × and {@value #OVERLOAD} × the real
 * router's capacity, the same
 * rates for every strategy (how each behaves past the point where the router breaks its SLO). A
 * strategy's capacity is the median over seeds, its minimum beside it; a seed changes the arrival
 * spreads of a trace and the sessions drawn, never the trace's order. Runs are independent
 * simulations, {@code --threads} at once; a strategy's sweep of a later seed starts at its capacity
 * on the seed before (the same precision in fewer runs).
 */
public final class CapacityRun {
  /**
   * The strategies a capacity run sweeps unless {@code --strategies} names others: the router, the
   * peers that route by cache or load at their current defaults and their 2025 ones (random,
   * round-robin and least-request-top-k are dominated by least-request), and the infinite-cache
   * reference.
   */
  public static final List<String> DEFAULT_STRATEGIES = List.of("affinity-router",
      "least-request", "consistent-hash", "sglang-cache-aware", "sglang-cache-aware-2025", "llm-d",
      "llm-d-2025", "llm-d-flow-control", "dynamo-kv", "aibrix-prefix", "infinite-cache");

  /** The rate, as a multiple of the router's capacity, at which goodput past it is measured. */
  public static final double PAST_CAPACITY = 1.5;
  /** The second such rate. */
  public static final double FAR_PAST_CAPACITY = 2.0;
  /** The third: an overload a fleet meets when a region fails over to it. */
  public static final double OVERLOAD = 3.0;

  /**
   * The wall-clock seconds the runs of one seed took: the cost of a run must not grow with the
   * overload.
   *
   * @param atCapacity the run at capacity (0 when there was none)
   * @param past the run at {@link #PAST_CAPACITY} ×
   * @param farPast the run at {@link #FAR_PAST_CAPACITY} ×
   * @param overload the run at {@link #OVERLOAD} ×
   */
  public record Wall(double atCapacity, double past, double farPast, double overload) {}

  /**
   * One seed of one strategy on one workload.
   *
   * @param seed the seed
   * @param capacity requests per second carried ({@link CapacitySweep}) with this seed
   * @param atCapacity the run at {@code capacity} (null when the capacity is 0)
   * @param past the run at {@link #PAST_CAPACITY} × the router's capacity
   * @param farPast the run at {@link #FAR_PAST_CAPACITY} × the router's capacity
   * @param overload the run at {@link #OVERLOAD} × the router's capacity
   * @param wall the wall-clock seconds those four runs took
   * @param points the sweep's runs, by rate
   */
  public record SeedRun(long seed, double capacity, @Nullable RunResult atCapacity,
      RunResult past, RunResult farPast, RunResult overload, Wall wall,
      List<CapacitySweep.Point> points) {}

  /**
   * One strategy on one workload, over seeds.
   *
   * @param strategy its name
   * @param router whether it is the real router or a variant
   * @param peer whether it is a peer emulation
   * @param reference whether it is the infinite-cache reference
   * @param pastRate {@link #PAST_CAPACITY} × the router's capacity
   * @param farPastRate {@link #FAR_PAST_CAPACITY} × the router's capacity
   * @param overloadRate {@link #OVERLOAD} × the router's capacity
   * @param seeds each seed's runs, in seed order
   */
  public record StrategyCapacity(String strategy, boolean router, boolean peer, boolean reference,
      double pastRate, double farPastRate, double overloadRate, List<SeedRun> seeds) {

    /** The median capacity over seeds (requests per second). */
    public double capacity() {
      return median(seeds, SeedRun::capacity);
    }

    /**
     * Whether every seed's sweep found a rate it does not carry; when not, the capacity is the
     * highest rate tried, a lower bound (the infinite-cache reference on short agent turns, where
     * nothing is ever evicted).
     */
    public boolean bounded(double sloMillis) {
      for (SeedRun s : seeds) {
        boolean broke = false;
        for (CapacitySweep.Point p : s.points()) {
          broke |= p.stress(sloMillis) > 1;
        }
        if (!broke) {
          return false;
        }
      }
      return true;
    }

    /** The lowest capacity over seeds. */
    public double capacityMin() {
      double min = Double.POSITIVE_INFINITY;
      for (SeedRun s : seeds) {
        min = Math.min(min, s.capacity());
      }
      return seeds.isEmpty() ? 0 : min;
    }

    /** The median over seeds of a figure of the run at each seed's capacity (0 where none). */
    public double atCapacity(ToDoubleFunction<RunResult> figure) {
      return median(seeds, s -> s.atCapacity() == null ? 0 : figure.applyAsDouble(s.atCapacity()));
    }

    /** The median over seeds of a figure of the runs at {@link #pastRate}. */
    public double past(ToDoubleFunction<RunResult> figure) {
      return median(seeds, s -> figure.applyAsDouble(s.past()));
    }

    /** The median over seeds of a figure of the runs at {@link #farPastRate}. */
    public double farPast(ToDoubleFunction<RunResult> figure) {
      return median(seeds, s -> figure.applyAsDouble(s.farPast()));
    }

    /** The median over seeds of a figure of the runs at {@link #overloadRate}. */
    public double overload(ToDoubleFunction<RunResult> figure) {
      return median(seeds, s -> figure.applyAsDouble(s.overload()));
    }

    /** The median over seeds of a wall-clock time. */
    public double wall(ToDoubleFunction<Wall> seconds) {
      return median(seeds, s -> seconds.applyAsDouble(s.wall()));
    }

    /** The first seed's run at its capacity (null when that capacity is 0). */
    public @Nullable RunResult atCapacity() {
      return seeds.get(0).atCapacity();
    }

    /** The first seed's run at {@link #pastRate}. */
    public RunResult pastCapacity() {
      return seeds.get(0).past();
    }
  }

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

    /** The infinite-cache reference's capacity (0 if it did not run). */
    public double referenceCapacity() {
      for (StrategyCapacity s : strategies) {
        if (s.reference()) {
          return s.capacity();
        }
      }
      return 0;
    }
  }

  private CapacityRun() {}

  /** The median of a figure over seeds (the lower middle one for an even count; 0 if none). */
  static double median(List<SeedRun> seeds, ToDoubleFunction<SeedRun> figure) {
    if (seeds.isEmpty()) {
      return 0;
    }
    double[] v = new double[seeds.size()];
    for (int i = 0; i < v.length; i++) {
      v[i] = figure.applyAsDouble(seeds.get(i));
    }
    return median(v);
  }

  private static double median(double[] values) {
    double[] v = values.clone();
    Arrays.sort(v);
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

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
    List<Long> seeds = o.seeds();
    List<Workload> raws = new ArrayList<>();
    for (long seed : seeds) {
      raws.add(WorkloadFactory.raw(name, o.withSeed(seed)));
    }
    String ties = WorkloadFactory.tiesWarning(name, o);
    if (ties != null) {
      log.accept(ties);
    }
    int serving = Simulator.servingReplicas(o);
    double start = o.rate() > 0 ? o.rate() : serving
        * LoadCalibration.requestsPerSecond(raws.get(0), engine,
            WorkloadFactory.CALIBRATION_SAMPLE);
    double slo = o.sloP90Millis(name);
    log.accept(String.format(Locale.ROOT, "capacity %s: %d requests, p90 TTFT SLO %.0f ms, "
        + "seeds %s, sweeps start at %.2f req/s", name, raws.get(0).size(), slo, seeds, start));
    // per strategy, seed by seed: each later seed's sweep starts at the capacity before it
    List<List<CompletableFuture<CapacitySweep.Result>>> sweeps = new ArrayList<>();
    for (StrategyRegistry.Entry s : strategies) {
      List<CompletableFuture<CapacitySweep.Result>> bySeed = new ArrayList<>();
      CompletableFuture<CapacitySweep.Result> prev = null;
      for (int k = 0; k < seeds.size(); k++) {
        int seed = k;
        DoubleFunction<RunResult> run = rate -> runAt(name, raws.get(seed),
            o.withSeed(seeds.get(seed)), engine, s, rate, log);
        CompletableFuture<CapacitySweep.Result> f = prev == null
            ? CompletableFuture.supplyAsync(() -> new CapacitySweep(slo, run).sweep(start), pool)
            : prev.thenApplyAsync(r -> new CapacitySweep(slo, run)
                .sweep(r.capacity() > 0 ? r.capacity() : start), pool);
        bySeed.add(f);
        prev = f;
      }
      sweeps.add(bySeed);
    }
    double[][] capacity = new double[strategies.size()][seeds.size()];
    List<List<List<CapacitySweep.Point>>> points = new ArrayList<>();
    double ours = 0;
    for (int i = 0; i < strategies.size(); i++) {
      List<List<CapacitySweep.Point>> p = new ArrayList<>();
      for (int k = 0; k < seeds.size(); k++) {
        CapacitySweep.Result r = get(sweeps.get(i).get(k));
        capacity[i][k] = r.capacity();
        p.add(r.points());
      }
      points.add(p);
      if (ours == 0 && registry.isRouter(strategies.get(i).name())) {
        ours = median(capacity[i]);
      }
    }
    double base = ours > 0 ? ours : start;
    double past = PAST_CAPACITY * base;
    double farPast = FAR_PAST_CAPACITY * base;
    double overload = OVERLOAD * base;
    List<List<Future<Timed>>> atCap = new ArrayList<>();
    List<List<Future<Timed>>> atPast = new ArrayList<>();
    List<List<Future<Timed>>> atFarPast = new ArrayList<>();
    List<List<Future<Timed>>> atOverload = new ArrayList<>();
    for (int i = 0; i < strategies.size(); i++) {
      StrategyRegistry.Entry s = strategies.get(i);
      List<Future<Timed>> c = new ArrayList<>();
      List<Future<Timed>> p = new ArrayList<>();
      List<Future<Timed>> fp = new ArrayList<>();
      List<Future<Timed>> ov = new ArrayList<>();
      for (int k = 0; k < seeds.size(); k++) {
        Workload raw = raws.get(k);
        SimulatorOptions so = o.withSeed(seeds.get(k));
        double cap = capacity[i][k];
        c.add(cap > 0 ? pool.submit(() -> timed(name, raw, so, engine, s, cap, log)) : null);
        p.add(pool.submit(() -> timed(name, raw, so, engine, s, past, log)));
        fp.add(pool.submit(() -> timed(name, raw, so, engine, s, farPast, log)));
        ov.add(pool.submit(() -> timed(name, raw, so, engine, s, overload, log)));
      }
      atCap.add(c);
      atPast.add(p);
      atFarPast.add(fp);
      atOverload.add(ov);
    }
    List<StrategyCapacity> out = new ArrayList<>();
    for (int i = 0; i < strategies.size(); i++) {
      StrategyRegistry.Entry e = strategies.get(i);
      List<SeedRun> runs = new ArrayList<>();
      for (int k = 0; k < seeds.size(); k++) {
        Future<Timed> cf = atCap.get(i).get(k);
        Timed c = cf == null ? null : get(cf);
        Timed p = get(atPast.get(i).get(k));
        Timed fp = get(atFarPast.get(i).get(k));
        Timed ov = get(atOverload.get(i).get(k));
        runs.add(new SeedRun(seeds.get(k), capacity[i][k], c == null ? null : c.result(),
            p.result(), fp.result(), ov.result(),
            new Wall(c == null ? 0 : c.seconds(), p.seconds(), fp.seconds(), ov.seconds()),
            points.get(i).get(k)));
      }
      out.add(new StrategyCapacity(e.name(), registry.isRouter(e.name()),
          registry.isPeer(e.name()), e.infiniteCache(), past, farPast, overload, runs));
    }
    return new WorkloadCapacity(name, slo, out);
  }

  private record Timed(RunResult result, double seconds) {}

  private static RunResult runAt(String name, Workload raw, SimulatorOptions o,
      EngineConfig engine, StrategyRegistry.Entry s, double rate, Consumer<String> log) {
    return timed(name, raw, o, engine, s, rate, log).result();
  }

  private static Timed timed(String name, Workload raw, SimulatorOptions o,
      EngineConfig engine, StrategyRegistry.Entry s, double rate, Consumer<String> log) {
    Workload w = WorkloadFactory.atRate(name, raw, o, rate);
    SimulationConfig config = Simulator.config(o, w, engine);
    long t0 = System.nanoTime();
    RunResult r = Simulation.run(w, s, config, line -> { });
    double seconds = (System.nanoTime() - t0) / 1e9;
    log.accept(String.format(Locale.ROOT,
        "  %-22s %-22s seed %d %7.2f req/s  p90 %8.0f ms  hit %5.1f%%  served %6.2f req/s "
        + "(%.2f of ideal)  (%.1f s)", s.name(), name, o.seed(), rate, r.ttftMillis(90),
        100 * r.hitRate(), r.requestsPerSecond(), r.servedRatio(), seconds));
    return new Timed(r, seconds);
  }

  private static <T> T get(Future<T> f) {
    if (f instanceof CompletableFuture<T> cf) {
      try {
        return cf.join();
      } catch (java.util.concurrent.CompletionException e) {
        if (e.getCause() instanceof RuntimeException re) {
          throw re;
        }
        throw new IllegalStateException(e.getCause());
      }
    }
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
