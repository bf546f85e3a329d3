package io.affinityrouter.examples.simulator.lifecycle;

import io.affinityrouter.examples.simulator.capacity.CapacitySweep;
import io.affinityrouter.examples.simulator.lifecycle.MultiModelSimulation.Config;
import io.affinityrouter.examples.simulator.lifecycle.MultiModelSimulation.Mode;
import io.affinityrouter.examples.simulator.lifecycle.MultiModelWorkload.ModelSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Consumer;

/**
 * The simulator's {@code --lifecycle} mode: a multi-model fleet (8 GPUs, the
 * {@link MultiModelWorkload#preset()} models) served by today's fixed deployments, one model per
 * GPU ({@link Mode#DEDICATED}) or two ({@link Mode#STATIC}), awake for good, GPUs per model in
 * proportion to mean traffic ({@link MultiModelSimulation#staticAssignment}), and by the model
 * lifecycle ({@link Mode#LIFECYCLE}: every GPU hosts an engine of all 6 models, at most 2 awake,
 * the rest asleep at level 1, started from the static placement), with stock and elastic KV. Per
 * fleet and seed: the capacity at the p90 TTFT SLO ({@link CapacitySweep}), then one run at that
 * capacity and one at the (two per GPU) static fleet's capacity for the other figures.
 *
 * <p>Options: {@code --seed N} (first seed, default 42), {@code --seeds N} (a count, default 3),
 * {@code --span S} (seconds of arrivals, default one compressed day, 600), {@code --slo-p90-ms}
 * (default 2000), {@code --threads}, {@code --start-rate} (the sweeps' first rate, default 40).
 */
public final class LifecycleRun {
  private LifecycleRun() {}

  /** The index of the packed static fleet among the fleets: the common rate of the second table. */
  static final int STATIC_ROW = 1;

  /** One fleet's runs over the seeds. */
  record FleetRuns(Config config, List<Double> capacities, List<MultiModelSimulation.Result> atCapacity,
      List<MultiModelSimulation.Result> atStatic) {}

  /** Runs the mode; the table goes to {@code out}, progress to {@code progress}. */
  public static void main(String[] args, Consumer<String> out, Consumer<String> progress) {
    long seed = 42;
    int seeds = 3;
    double span = MultiModelWorkload.DAY_SECONDS;
    double slo = 2000;
    double start = 40;
    int threads = Runtime.getRuntime().availableProcessors();
    double rate = 0;
    List<String> tokens = new ArrayList<>();
    for (String a : args) {
      tokens.addAll(Arrays.asList(a.trim().split("\\s+")));
    }
    tokens.removeIf(t -> t.isEmpty() || t.equals("--lifecycle"));
    for (int i = 0; i + 1 < tokens.size(); i += 2) {
      String v = tokens.get(i + 1);
      switch (tokens.get(i)) {
        case "--seed" -> seed = Long.parseLong(v);
        case "--seeds" -> seeds = Integer.parseInt(v);
        case "--span" -> span = Double.parseDouble(v);
        case "--slo-p90-ms" -> slo = Double.parseDouble(v);
        case "--threads" -> threads = Integer.parseInt(v);
        case "--start-rate" -> start = Double.parseDouble(v);
        case "--rate" -> rate = Double.parseDouble(v);
        default -> throw new IllegalArgumentException(tokens.get(i) + ": unknown option (expected:"
            + " --seed --seeds --span --slo-p90-ms --threads --start-rate with --lifecycle)");
      }
    }
    if (tokens.size() % 2 != 0) {
      throw new IllegalArgumentException(tokens.get(tokens.size() - 1) + ": no value");
    }
    List<ModelSpec> models = MultiModelWorkload.preset();
    out.accept(MultiModelWorkload.describe(models, span));
    out.accept(fleetDescription(models));
    List<Config> fleets = List.of(Config.of(Mode.DEDICATED, false, 0),
        Config.of(Mode.STATIC, false, 0), Config.of(Mode.LIFECYCLE, false, 0),
        Config.of(Mode.LIFECYCLE, true, 0));
    if (rate > 0) { // one run of each fleet at this rate, no capacity search
      for (Config f : fleets) {
        long t0 = System.nanoTime();
        MultiModelSimulation.Result r = MultiModelSimulation.run(
            MultiModelWorkload.generate(models, rate, span, seed), withSeed(f, seed));
        out.accept(String.format(Locale.ROOT, "%-22s %.1f req/s: p90 TTFT %.0f ms, served %.3f, "
            + "completed %d/%d, wake-waiters %d p90 %.0f ms, GiB*s/req %.0f, models/GPU %.1f, "
            + "min awake %s, wakes %d sleeps %d, actions %s (%.1f s)%n", f.label(), rate,
            r.run().ttftMillis(90), r.run().servedRatio(), r.run().completed(),
            r.run().requests(), r.wakeWaitTtftMicros().getTotalCount(),
            r.wakeWaitTtftMicros().getValueAtPercentile(90) / 1000.0, r.gibSecondsPerRequest(),
            r.modelsPerGpu(), Arrays.toString(r.minAwake()), r.wakes(), r.sleeps(),
            new TreeMap<>(r.actions()), (System.nanoTime() - t0) / 1e9));
      }
      return;
    }
    List<FleetRuns> runs = run(models, fleets, seed, seeds, span, slo, start, threads, progress);
    out.accept(table(runs, slo));
  }

  static String fleetDescription(List<ModelSpec> models) {
    Config c = Config.of(Mode.STATIC, false, 0);
    int[][] a = MultiModelSimulation.staticAssignment(models, c.gpus());
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "fleet: %d GPUs (H100-80GB, %.0f GiB usable), %d awake "
        + "engines per GPU at most, each claim %.0f GiB; 7B engines (Qwen2.5-7B step costs)%n",
        c.gpus(), MultiModelSimulation.USABLE_GIB, MultiModelSimulation.SLOTS_PER_GPU,
        MultiModelSimulation.CLAIM_BYTES / (double) (1L << 30)));
    b.append("  dedicated (one deployment per model, one engine per GPU, whole-GPU KV): ");
    placement(b, models, MultiModelSimulation.staticAssignment(models, c.gpus(), 1));
    b.append("  static (two models awake per GPU for good, half-GPU KV each): ");
    placement(b, models, a);
    b.append(String.format(Locale.ROOT, "  lifecycle: every GPU hosts all %d models (asleep at "
        + "level 1, weights in CPU RAM), starting from the static placement awake; claims "
        + "maxAwake %d, idleTimeout %d s, wakeCooldown 30 s, pressureDelay 5 s; "
        + "runOnce every simulated second, on wake requests and on each answer%n", models.size(),
        c.gpus(), c.idleTimeout().toSeconds()));
    b.append(String.format(Locale.ROOT, "  sleep/wake (level 1, 7B): wake %.1f s, sleep %.1f s "
        + "(after the engine drains); KV: stock %d blocks per engine; elastic up to %d blocks "
        + "alone on its GPU%n", MultiModelSimulation.WAKE_L1_SECONDS,
        MultiModelSimulation.SLEEP_L1_SECONDS, MultiModelSimulation.SHARE_BLOCKS,
        io.affinityrouter.examples.simulator.fleet.EngineConfig.DEFAULT_KV_BLOCKS));
    return b.toString();
  }

  private static void placement(StringBuilder b, List<ModelSpec> models, int[][] a) {
    for (int g = 0; g < a.length; g++) {
      b.append("gpu-").append(g).append('=');
      for (int s = 0; s < a[g].length; s++) {
        b.append(s > 0 ? "+" : "").append(models.get(a[g][s]).name());
      }
      b.append(g + 1 < a.length ? ", " : "\n");
    }
  }

  /** Every fleet's capacity sweeps and figure runs, in parallel over fleets and seeds. */
  static List<FleetRuns> run(List<ModelSpec> models, List<Config> fleets, long seed, int seeds,
      double span, double slo, double start, int threads, Consumer<String> progress) {
    ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads));
    try {
      List<List<Future<double[]>>> sweeps = new ArrayList<>();
      for (Config fleet : fleets) {
        List<Future<double[]>> perSeed = new ArrayList<>();
        for (int i = 0; i < seeds; i++) {
          long s = seed + i;
          Config c = withSeed(fleet, s);
          perSeed.add(pool.submit(() -> {
            long t0 = System.nanoTime();
            CapacitySweep.Result r = new CapacitySweep(slo,
                rate -> MultiModelSimulation.run(MultiModelWorkload.generate(models, rate, span, s),
                    c).run()).sweep(start);
            progress.accept(String.format(Locale.ROOT, "  %-20s seed %d: capacity %.1f req/s "
                + "(%d runs, %.0f s)", c.label(), s, r.capacity(), r.points().size(),
                (System.nanoTime() - t0) / 1e9));
            return new double[] {r.capacity()};
          }));
        }
        sweeps.add(perSeed);
      }
      List<List<Double>> caps = new ArrayList<>();
      for (List<Future<double[]>> perSeed : sweeps) {
        List<Double> c = new ArrayList<>();
        for (Future<double[]> f : perSeed) {
          c.add(f.get()[0]);
        }
        caps.add(c);
      }
      double staticCapacity = median(caps.get(STATIC_ROW));
      List<List<Future<MultiModelSimulation.Result>>> own = new ArrayList<>();
      List<List<Future<MultiModelSimulation.Result>>> common = new ArrayList<>();
      for (int f = 0; f < fleets.size(); f++) {
        List<Future<MultiModelSimulation.Result>> a = new ArrayList<>();
        List<Future<MultiModelSimulation.Result>> b = new ArrayList<>();
        for (int i = 0; i < seeds; i++) {
          long s = seed + i;
          Config c = withSeed(fleets.get(f), s);
          double cap = caps.get(f).get(i);
          a.add(pool.submit(() -> MultiModelSimulation.run(
              MultiModelWorkload.generate(models, cap, span, s), c)));
          b.add(pool.submit(() -> MultiModelSimulation.run(
              MultiModelWorkload.generate(models, staticCapacity, span, s), c)));
        }
        own.add(a);
        common.add(b);
      }
      List<FleetRuns> out = new ArrayList<>();
      for (int f = 0; f < fleets.size(); f++) {
        List<MultiModelSimulation.Result> a = new ArrayList<>();
        List<MultiModelSimulation.Result> b = new ArrayList<>();
        for (int i = 0; i < seeds; i++) {
          a.add(own.get(f).get(i).get());
          b.add(common.get(f).get(i).get());
        }
        out.add(new FleetRuns(fleets.get(f), caps.get(f), a, b));
      }
      return out;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    } finally {
      pool.shutdownNow();
    }
  }

  private static Config withSeed(Config c, long seed) {
    return new Config(c.mode(), c.elasticKv(), c.gpus(), c.wakeNanos(), c.sleepNanos(),
        c.idleTimeout(), seed);
  }

  static String table(List<FleetRuns> runs, double slo) {
    StringBuilder b = new StringBuilder();
    double dedicatedCap = median(runs.get(0).capacities());
    double staticCap = median(runs.get(STATIC_ROW).capacities());
    b.append(String.format(Locale.ROOT, "%nCapacity at p90 TTFT <= %.0f ms (served ratio >= "
        + "%.2f), median over %d seeds; figures at each fleet's own capacity, median over "
        + "seeds%n", slo, CapacitySweep.MIN_SERVED_RATIO, runs.get(0).capacities().size()));
    b.append("| fleet | KV | capacity req/s (per seed) | x dedicated | x static "
        + "| GiB*s per served request | models served per GPU | p90 TTFT ms "
        + "| p90 TTFT of wake-waiters ms (count) | min awake per model | wakes / sleeps |\n");
    b.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (FleetRuns r : runs) {
      double cap = median(r.capacities());
      row(b, r, r.atCapacity(), String.format(Locale.ROOT, "%.1f (%s)", cap,
          join(r.capacities())), String.format(Locale.ROOT, "%.2f | %.2f", cap / dedicatedCap,
              cap / staticCap));
    }
    b.append(String.format(Locale.ROOT, "%nThe same fleets at the static fleet's capacity "
        + "(%.1f req/s), median over seeds%n", staticCap));
    b.append("| fleet | KV | rate req/s | | | GiB*s per served request | models served per GPU "
        + "| p90 TTFT ms | p90 TTFT of wake-waiters ms (count) | min awake per model "
        + "| wakes / sleeps |\n");
    b.append("|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (FleetRuns r : runs) {
      row(b, r, r.atStatic(), String.format(Locale.ROOT, "%.1f", staticCap), " | ");
    }
    b.append(String.format(Locale.ROOT, "%nwake time a waiter is compared against: %.1f s "
        + "(level 1; 2x = %.1f s)%n", MultiModelSimulation.WAKE_L1_SECONDS,
        2 * MultiModelSimulation.WAKE_L1_SECONDS));
    b.append("lifecycle actions (seed 1 of each fleet, at its capacity): \n");
    for (FleetRuns r : runs) {
      if (r.config().mode() == Mode.LIFECYCLE) {
        b.append("  ").append(r.config().label()).append(": ")
            .append(new TreeMap<>(r.atCapacity().get(0).actions())).append('\n');
      }
    }
    return b.toString();
  }

  private static void row(StringBuilder b, FleetRuns r, List<MultiModelSimulation.Result> res,
      String rate, String ratio) {
    List<Double> mem = new ArrayList<>();
    List<Double> per = new ArrayList<>();
    List<Double> p90 = new ArrayList<>();
    List<Double> wake = new ArrayList<>();
    List<Double> waiters = new ArrayList<>();
    List<Double> wakes = new ArrayList<>();
    List<Double> sleeps = new ArrayList<>();
    int[] min = null;
    for (MultiModelSimulation.Result x : res) {
      mem.add(x.gibSecondsPerRequest());
      per.add(x.modelsPerGpu());
      p90.add(x.run().ttftMillis(90));
      waiters.add((double) x.wakeWaitTtftMicros().getTotalCount());
      wake.add(x.wakeWaitTtftMicros().getTotalCount() == 0 ? 0
          : x.wakeWaitTtftMicros().getValueAtPercentile(90) / 1000.0);
      wakes.add((double) x.wakes());
      sleeps.add((double) x.sleeps());
      if (min == null) {
        min = x.minAwake().clone();
      } else {
        for (int m = 0; m < min.length; m++) {
          min[m] = Math.min(min[m], x.minAwake()[m]);
        }
      }
    }
    String kv = switch (r.config().mode()) {
      case DEDICATED -> "whole GPU";
      case STATIC -> "half GPU (no neighbour sleeps)";
      case LIFECYCLE -> r.config().elasticKv() ? "elastic" : "stock (half GPU)";
    };
    b.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %.1f | %.1f | %.0f | %s | %s | "
        + "%.0f / %.0f |%n", r.config().mode().name().toLowerCase(Locale.ROOT), kv, rate,
        ratio, median(mem), median(per), median(p90), median(waiters) == 0 ? "- (0)"
            : String.format(Locale.ROOT, "%.0f (%.0f)", median(wake), median(waiters)),
        Arrays.toString(min), median(wakes), median(sleeps)));
  }

  private static String join(List<Double> xs) {
    StringBuilder b = new StringBuilder();
    for (double x : xs) {
      b.append(b.length() > 0 ? ", " : "").append(String.format(Locale.ROOT, "%.1f", x));
    }
    return b.toString();
  }

  static double median(List<Double> xs) {
    if (xs.isEmpty()) {
      return 0;
    }
    double[] a = xs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    int n = a.length;
    return n % 2 == 1 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
  }
}
