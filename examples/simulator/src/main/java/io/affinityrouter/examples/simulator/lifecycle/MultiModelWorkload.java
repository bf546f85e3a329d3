package io.affinityrouter.examples.simulator.lifecycle;

import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The open-loop request stream of a multi-model fleet ({@code --lifecycle}): each model's rate
 * follows a daily cycle compressed in time, with its busy hours at its own phase, plus random bursts;
 * rarely used ("tail") models only see short episodes of traffic. Requests are single turns: a
 * model-wide system prompt (cached after the first request on a copy) and a unique user part, then
 * the output.
 *
 * <p>Arrivals are drawn by thinning a Poisson process at each model's peak rate; everything depends
 * only on the models, the rate, the span and the seed.
 *
 * @param models the models, in order (a request's {@link Arrival#model()} indexes it)
 * @param rate the mean requests per second offered to the whole fleet
 * @param spanNanos the span of arrivals
 * @param arrivals the requests by arrival time
 */
public record MultiModelWorkload(List<ModelSpec> models, double rate, long spanNanos,
    List<Arrival> arrivals) {

  /** One compressed day, seconds: {@value} (24 h at 144×: an hour lasts 25 s). */
  public static final double DAY_SECONDS = 600;
  /** System prompt tokens of every request, shared by all requests for one model: {@value}. */
  public static final int SYSTEM_TOKENS = 512;
  /** Median user tokens (log-normal, sigma {@value #USER_SIGMA}): {@value}. */
  public static final int USER_MEDIAN = 800;
  /** Sigma of the log-normal user part. */
  public static final double USER_SIGMA = 0.8;
  /** Median output tokens (log-normal, sigma {@value #OUTPUT_SIGMA}): {@value}. */
  public static final int OUTPUT_MEDIAN = 150;
  /** Sigma of the log-normal output. */
  public static final double OUTPUT_SIGMA = 0.7;
  /** Mean seconds between bursts of one model: {@value}. */
  public static final double BURST_EVERY_SECONDS = 120;
  /** How long a burst lasts, seconds: {@value}. */
  public static final double BURST_SECONDS = 15;
  /** A burst multiplies the model's rate by: {@value}. */
  public static final double BURST_FACTOR = 3;
  /** Mean seconds between a tail model's traffic episodes: {@value}. */
  public static final double EPISODE_EVERY_SECONDS = 200;
  /** How long a tail model's episode lasts, seconds: {@value}. */
  public static final double EPISODE_SECONDS = 30;

  /**
   * One model of the fleet.
   *
   * @param name the model's name
   * @param share its share of the mean traffic
   * @param phase when in the day its traffic peaks, as a fraction of the day
   * @param amplitude the daily swing: the rate is {@code mean·(1 + amplitude·cos(2π(t/day −
   *     phase)))}
   * @param tail whether it is a rarely used model: traffic only in episodes, none in between
   * @param minAwake the copies its claim keeps awake at least
   */
  public record ModelSpec(String name, double share, double phase, double amplitude,
      boolean tail, int minAwake) {}

  /** One request, for model {@code model} (an index into the models). */
  public record Arrival(long atNanos, int model, SimRequest request) {}

  /**
   * The {@code --lifecycle} preset: four busy models whose busy hours are a quarter of a day apart
   * (30/25/20/15% of the traffic, ±80% daily swing) and two tail models (6% and 4%) that only see
   * episodes.
   */
  public static List<ModelSpec> preset() {
    return List.of(
        new ModelSpec("chat-a", 0.30, 0.00, 0.8, false, 1),
        new ModelSpec("chat-b", 0.25, 0.25, 0.8, false, 1),
        new ModelSpec("code", 0.20, 0.50, 0.8, false, 1),
        new ModelSpec("summarize", 0.15, 0.75, 0.8, false, 1),
        new ModelSpec("tail-1", 0.06, 0.00, 0.0, true, 0),
        new ModelSpec("tail-2", 0.04, 0.00, 0.0, true, 0));
  }

  /** The workload's parameters, one line each (printed by the {@code --lifecycle} mode). */
  public static String describe(List<ModelSpec> models, double spanSeconds) {
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "workload: %d models over %.0f s; one day = %.0f s "
        + "(24 h compressed %.0fx)%n", models.size(), spanSeconds, DAY_SECONDS,
        86400 / DAY_SECONDS));
    for (ModelSpec m : models) {
      b.append(String.format(Locale.ROOT, "  %-10s share %4.0f%%  %s  min awake %d%n", m.name(),
          100 * m.share(), m.tail() ? String.format(Locale.ROOT,
              "tail: %.0f s episodes every %.0f s on average, nothing between", EPISODE_SECONDS,
              EPISODE_EVERY_SECONDS)
              : String.format(Locale.ROOT, "daily swing ±%.0f%%, peak at %02.0f:00", 100
                  * m.amplitude(), 24 * m.phase()), m.minAwake()));
    }
    b.append(String.format(Locale.ROOT, "  bursts: x%.0f for %.0f s, every %.0f s per model on "
        + "average (tail models: none)%n", BURST_FACTOR, BURST_SECONDS, BURST_EVERY_SECONDS));
    b.append(String.format(Locale.ROOT, "  requests: %d-token system prompt per model + "
        + "log-normal user part (median %d, sigma %.1f), log-normal output (median %d, "
        + "sigma %.1f); no sessions%n", SYSTEM_TOKENS, USER_MEDIAN, USER_SIGMA, OUTPUT_MEDIAN,
        OUTPUT_SIGMA));
    return b.toString();
  }

  /** Generates the requests. */
  public static MultiModelWorkload generate(List<ModelSpec> models, double rate,
      double spanSeconds, long seed) {
    List<Arrival> all = new ArrayList<>();
    for (int m = 0; m < models.size(); m++) {
      ModelSpec spec = models.get(m);
      SplittableRandom rnd = new SplittableRandom(seed * 1_000_003L + m * 7919L + 17);
      double mean = rate * spec.share();
      List<double[]> windows = new ArrayList<>(); // bursts or episodes: [start, end]
      double every = spec.tail() ? EPISODE_EVERY_SECONDS : BURST_EVERY_SECONDS;
      double length = spec.tail() ? EPISODE_SECONDS : BURST_SECONDS;
      for (double t = -Math.log(1 - rnd.nextDouble()) * every; t < spanSeconds;
          t += -Math.log(1 - rnd.nextDouble()) * every) {
        windows.add(new double[] {t, t + length});
      }
      double peak = spec.tail() ? mean * every / length
          : mean * (1 + spec.amplitude()) * BURST_FACTOR;
      if (peak <= 0) {
        continue;
      }
      for (double t = -Math.log(1 - rnd.nextDouble()) / peak; t < spanSeconds;
          t += -Math.log(1 - rnd.nextDouble()) / peak) {
        boolean in = false;
        for (double[] w : windows) {
          if (t >= w[0] && t < w[1]) {
            in = true;
            break;
          }
        }
        double r;
        if (spec.tail()) {
          r = in ? peak : 0;
        } else {
          r = mean * (1 + spec.amplitude() * Math.cos(2 * Math.PI * (t / DAY_SECONDS
              - spec.phase()))) * (in ? BURST_FACTOR : 1);
        }
        if (rnd.nextDouble() * peak < r) {
          int user = clamp(logNormal(rnd, USER_MEDIAN, USER_SIGMA), 16, 8000);
          int out = clamp(logNormal(rnd, OUTPUT_MEDIAN, OUTPUT_SIGMA), 4, 1024);
          all.add(new Arrival((long) (t * 1e9), m, new SimRequest(0, null, 0,
              new long[] {1_000L + m, 0}, new int[] {SYSTEM_TOKENS, user}, out, -1)));
        }
      }
    }
    all.sort(Comparator.comparingLong(Arrival::atNanos));
    List<Arrival> numbered = new ArrayList<>(all.size());
    long id = 1;
    for (Arrival a : all) {
      SimRequest r = a.request();
      long uid = id++;
      // the user part's segment id is unique per request; the system prompt's is the model's
      numbered.add(new Arrival(a.atNanos(), a.model(), new SimRequest(uid, null, a.atNanos(),
          new long[] {r.segmentIds()[0], (1L << 40) + uid}, r.segmentTokens(),
          r.outputTokens(), -1)));
    }
    return new MultiModelWorkload(List.copyOf(models), rate, (long) (spanSeconds * 1e9),
        List.copyOf(numbered));
  }

  private static int logNormal(SplittableRandom rnd, double median, double sigma) {
    double u1 = 1 - rnd.nextDouble();
    double u2 = rnd.nextDouble();
    double z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    return (int) Math.round(median * Math.exp(sigma * z));
  }

  private static int clamp(int v, int lo, int hi) {
    return Math.max(lo, Math.min(hi, v));
  }
}
