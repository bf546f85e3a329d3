package io.affinityrouter.core.metrics;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalDouble;
import org.jspecify.annotations.Nullable;

/**
 * Derives each model's output tokens per second from successive scrapes of one replica, for
 * engines that expose only a counter ({@code vllm:generation_tokens_total}).
 *
 * <p>Each {@link #update} compares a model's generation-token counter with the previous scrape's:
 * rate = increase / elapsed time, where a counter lower than before means the engine restarted,
 * so the whole new value counts as the increase (as Prometheus' {@code rate()} does). The first
 * scrape of a model gives no rate; a scrape whose time is not after the previous one (a repeat or
 * an out-of-order delivery) keeps the previous rate and baseline. A model whose engine reports its
 * own rate (SGLang's {@code gen_throughput}) keeps it. A model missing from a scrape loses its
 * baseline. Times are an injected monotonic clock in nanoseconds (e.g. a Caffeine
 * {@code Ticker} or {@link System#nanoTime()}), compared by subtraction so wrap-around is fine.
 *
 * <p>Use one tracker per replica. Thread-safe: updates are serialized (scrapes are not the
 * routing hot path).
 */
public final class ThroughputTracker {
  private static final double NANOS_PER_SECOND = 1e9;

  private Map<String, Baseline> baselines = new HashMap<>(); // guarded by this

  /** A tracker that has seen no scrape. */
  public ThroughputTracker() {}

  /**
   * Records {@code scrape}, taken at {@code timeNanos}, and returns it with each model's
   * {@code outputTokensPerSecond} filled in from the counter's increase since the previous scrape
   * (left as it was when no rate can be derived yet).
   *
   * @throws NullPointerException if {@code scrape} is null
   */
  public synchronized EngineMetrics update(EngineMetrics scrape, long timeNanos) {
    Objects.requireNonNull(scrape, "scrape");
    Map<String, Baseline> next = new HashMap<>();
    Map<String, ModelMetrics> models = new LinkedHashMap<>();
    for (ModelMetrics model : scrape.models().values()) {
      OptionalDouble counter = model.generationTokens();
      if (counter.isEmpty()) {
        models.put(model.name(), model);
        continue;
      }
      Baseline baseline = advance(baselines.get(model.name()), counter.getAsDouble(), timeNanos);
      next.put(model.name(), baseline);
      boolean derive = !model.outputRateFromEngine() && !Double.isNaN(baseline.rate());
      models.put(model.name(), derive ? model.withOutputTokensPerSecond(baseline.rate()) : model);
    }
    baselines = next;
    return scrape.withModels(models);
  }

  private static Baseline advance(@Nullable Baseline previous, double counter, long timeNanos) {
    if (previous == null) {
      return new Baseline(counter, timeNanos, Double.NaN);
    }
    long elapsed = timeNanos - previous.timeNanos();
    if (elapsed <= 0) {
      return previous;
    }
    double increase = counter >= previous.counter() ? counter - previous.counter() : counter;
    double rate = increase / (elapsed / NANOS_PER_SECOND);
    return new Baseline(counter, timeNanos, Double.isFinite(rate) ? rate : previous.rate());
  }

  /** A model's counter at a time, and the rate derived when it was recorded (NaN if none). */
  private record Baseline(double counter, long timeNanos, double rate) {}
}
