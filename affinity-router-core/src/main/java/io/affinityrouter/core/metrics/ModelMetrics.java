package io.affinityrouter.core.metrics;

import io.affinityrouter.ModelState;
import io.affinityrouter.ReplicaLoad;
import java.util.Objects;
import java.util.OptionalDouble;
import java.util.OptionalInt;

/**
 * What one scrape says about one model ({@code model_name} label) on one replica: its load, its
 * state, and the counters a gateway tracks beyond {@link ReplicaLoad}. Figures are summed over the
 * engine's data-parallel ranks (vLLM V1 {@code engine} label); see {@link EngineMetrics} for where
 * each comes from.
 *
 * <p>Immutable and thread-safe. Obtained from {@link EngineMetrics#models()}.
 */
public final class ModelMetrics {
  private final String name;
  private final ReplicaLoad load;
  private final boolean outputRateFromEngine;
  private final ModelState state;
  private final OptionalInt kvBlockSize;
  private final OptionalDouble prefixCacheQueries;
  private final OptionalDouble prefixCacheHits;
  private final OptionalDouble prefixCacheHitRate;
  private final OptionalDouble generationTokens;
  private final OptionalDouble promptTokens;

  ModelMetrics(String name, ReplicaLoad load, boolean outputRateFromEngine, ModelState state,
      OptionalInt kvBlockSize, OptionalDouble prefixCacheQueries, OptionalDouble prefixCacheHits,
      OptionalDouble prefixCacheHitRate, OptionalDouble generationTokens,
      OptionalDouble promptTokens) {
    this.name = name;
    this.load = load;
    this.outputRateFromEngine = outputRateFromEngine;
    this.state = state;
    this.kvBlockSize = kvBlockSize;
    this.prefixCacheQueries = prefixCacheQueries;
    this.prefixCacheHits = prefixCacheHits;
    this.prefixCacheHitRate = prefixCacheHitRate;
    this.generationTokens = generationTokens;
    this.promptTokens = promptTokens;
  }

  /** The {@code model_name} label, or {@link EngineMetrics#NO_MODEL} for samples without one. */
  public String name() {
    return name;
  }

  /**
   * The model's load. {@link ReplicaLoad#outputTokensPerSecond()} is SGLang's
   * {@code gen_throughput}; for vLLM, which only has a counter, it is {@code 0} until a
   * {@link ThroughputTracker} has seen two scrapes.
   */
  public ReplicaLoad load() {
    return load;
  }

  /**
   * {@link ModelState#SLEEPING} when vLLM's {@code engine_sleep_state} says an engine of the model
   * sleeps, else {@link ModelState#ACTIVE}.
   */
  public ModelState state() {
    return state;
  }

  /** Tokens per KV block (vLLM {@code block_size}, SGLang {@code page_size}), if reported. */
  public OptionalInt kvBlockSize() {
    return kvBlockSize;
  }

  /** Tokens looked up in the prefix cache since start (a counter), if reported. */
  public OptionalDouble prefixCacheQueries() {
    return prefixCacheQueries;
  }

  /** Tokens found in the prefix cache since start (a counter), if reported. */
  public OptionalDouble prefixCacheHits() {
    return prefixCacheHits;
  }

  /**
   * The prefix-cache hit rate, 0..1, as a gauge reports it (SGLang {@code cache_hit_rate}, vLLM V0
   * {@code gpu_prefix_cache_hit_rate}); empty when not reported or when vLLM reports {@code -1}
   * (no lookups yet). For the counters' ratio use {@link #prefixCacheHits()} over
   * {@link #prefixCacheQueries()}.
   */
  public OptionalDouble prefixCacheHitRate() {
    return prefixCacheHitRate;
  }

  /** Output tokens generated since start (a counter), if reported. */
  public OptionalDouble generationTokens() {
    return generationTokens;
  }

  /** Prompt tokens processed since start (a counter), if reported. */
  public OptionalDouble promptTokens() {
    return promptTokens;
  }

  /** Whether the load's output rate is the engine's own gauge rather than a derived one. */
  boolean outputRateFromEngine() {
    return outputRateFromEngine;
  }

  /** A copy whose load has another output rate (from {@link ThroughputTracker}). */
  ModelMetrics withOutputTokensPerSecond(double rate) {
    return new ModelMetrics(name, load.toBuilder().outputTokensPerSecond(rate).build(),
        outputRateFromEngine, state, kvBlockSize, prefixCacheQueries, prefixCacheHits,
        prefixCacheHitRate, generationTokens, promptTokens);
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof ModelMetrics)) {
      return false;
    }
    ModelMetrics that = (ModelMetrics) o;
    return name.equals(that.name) && load.equals(that.load)
        && outputRateFromEngine == that.outputRateFromEngine && state == that.state
        && kvBlockSize.equals(that.kvBlockSize) && prefixCacheQueries.equals(that.prefixCacheQueries)
        && prefixCacheHits.equals(that.prefixCacheHits)
        && prefixCacheHitRate.equals(that.prefixCacheHitRate)
        && generationTokens.equals(that.generationTokens) && promptTokens.equals(that.promptTokens);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, load, state, kvBlockSize, prefixCacheQueries, prefixCacheHits,
        generationTokens);
  }

  @Override
  public String toString() {
    return "ModelMetrics{" + (name.isEmpty() ? "<no model>" : name) + ", " + state + ", " + load
        + ", blockSize=" + kvBlockSize + ", prefixQueries=" + prefixCacheQueries
        + ", prefixHits=" + prefixCacheHits + ", hitRate=" + prefixCacheHitRate
        + ", generationTokens=" + generationTokens + ", promptTokens=" + promptTokens + '}';
  }
}
