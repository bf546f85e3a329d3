package io.affinityrouter.core.metrics;

import io.affinityrouter.ModelState;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.core.metrics.EngineFamilies.Field;
import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * What one scrape says about one model ({@code model_name} label) on one replica: its load, its
 * state, and the counters a gateway tracks beyond {@link ReplicaLoad}. Figures are summed over the
 * engine's data-parallel ranks (vLLM V1 {@code engine} label, SGLang {@code dp_rank}), each rank
 * counted once; see {@link EngineMetrics} for where each comes from.
 *
 * <p>Immutable and thread-safe. Obtained from {@link EngineMetrics#models()}.
 */
public final class ModelMetrics {
  private final String name;
  private final ReplicaLoad load;
  private final boolean outputRateFromEngine;
  private final ModelState state;
  private final OptionalInt kvBlockSize;
  private final Map<Field, Double> figures;

  /**
   * @param figures the reported figures by field (a field absent = not reported); copied
   */
  ModelMetrics(String name, ReplicaLoad load, boolean outputRateFromEngine, ModelState state,
      OptionalInt kvBlockSize, Map<Field, Double> figures) {
    this.name = name;
    this.load = load;
    this.outputRateFromEngine = outputRateFromEngine;
    this.state = state;
    this.kvBlockSize = kvBlockSize;
    this.figures = figures.isEmpty() ? Map.of()
        : Collections.unmodifiableMap(new EnumMap<>(figures));
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

  /**
   * Tokens looked up in the prefix cache since start (a counter), if reported. On vLLM before PR
   * #48860 a request the scheduler could not admit is looked up, and counted, again at every
   * retry, so under KV pressure or a deferring KV connector this over-counts.
   */
  public OptionalDouble prefixCacheQueries() {
    return figure(Field.PREFIX_QUERIES);
  }

  /** Tokens found in the prefix cache since start (a counter), if reported; see the caveat of
   * {@link #prefixCacheQueries()}. */
  public OptionalDouble prefixCacheHits() {
    return figure(Field.PREFIX_HITS);
  }

  /**
   * The prefix-cache hit rate, 0..1, as a gauge reports it (SGLang {@code cache_hit_rate}, vLLM V0
   * {@code gpu_prefix_cache_hit_rate}); empty when not reported or when vLLM reports {@code -1}
   * (no lookups yet). For the counters' ratio use {@link #prefixCacheHits()} over
   * {@link #prefixCacheQueries()}.
   */
  public OptionalDouble prefixCacheHitRate() {
    return figure(Field.HIT_RATE);
  }

  /** Output tokens generated since start (a counter), if reported. */
  public OptionalDouble generationTokens() {
    return figure(Field.GENERATION_TOKENS);
  }

  /** Prompt tokens processed since start (a counter), if reported. */
  public OptionalDouble promptTokens() {
    return figure(Field.PROMPT_TOKENS);
  }

  /**
   * Prompt tokens the engine prefilled itself since start (a counter: vLLM
   * {@code prompt_tokens_by_source_total{source="local_compute"}}, SGLang
   * {@code realtime_tokens_total{mode="prefill_compute"}}), if reported. Counted once per
   * scheduled prefill, unlike {@link #prefixCacheQueries()}.
   */
  public OptionalDouble promptTokensComputed() {
    return figure(Field.PROMPT_COMPUTED);
  }

  /**
   * Prompt tokens served from the engine's own prefix cache since start (a counter: vLLM
   * {@code prompt_tokens_by_source_total{source="local_cache_hit"}}, SGLang
   * {@code realtime_tokens_total{mode="prefill_cache"}}), if reported.
   */
  public OptionalDouble promptTokensCacheHit() {
    return figure(Field.PROMPT_CACHE_HIT);
  }

  /**
   * Prompt tokens whose KV a connector loaded from outside the engine since start (a counter:
   * vLLM {@code prompt_tokens_by_source_total{source="external_kv_transfer"}}), if reported.
   */
  public OptionalDouble promptTokensTransferred() {
    return figure(Field.PROMPT_TRANSFERRED);
  }

  /**
   * Requests the engine evicted from its running batch for want of KV since start, to be
   * recomputed later (a counter: vLLM {@code num_preemptions_total}, SGLang
   * {@code num_retracted_requests_total}), if reported. Its rate is the engine's KV pressure.
   */
  public OptionalDouble preemptions() {
    return figure(Field.PREEMPTIONS);
  }

  /**
   * Waiting requests that wait for scheduling capacity (vLLM
   * {@code num_requests_waiting_by_reason{reason="capacity"}}), if reported: the engine is full.
   */
  public OptionalInt waitingForCapacity() {
    return count(Field.WAITING_CAPACITY);
  }

  /**
   * Waiting requests deferred by a transient constraint: LoRA budget, KV transfer or a blocked
   * status (vLLM {@code num_requests_waiting_by_reason{reason="deferred"}}), if reported.
   */
  public OptionalInt waitingDeferred() {
    return count(Field.WAITING_DEFERRED);
  }

  /** KV slots held by running requests (SGLang {@code kv_used_tokens}), if reported. */
  public OptionalLong kvUsedTokens() {
    return tokens(Field.KV_USED_TOKENS);
  }

  /** Free KV slots (SGLang {@code kv_available_tokens}), if reported. */
  public OptionalLong kvAvailableTokens() {
    return tokens(Field.KV_AVAILABLE_TOKENS);
  }

  /**
   * KV slots the prefix cache holds but would give back under pressure (SGLang
   * {@code kv_evictable_tokens}), if reported. Counted as free in {@link ReplicaLoad#kvUsage()},
   * as vLLM counts its cached, unreferenced blocks.
   */
  public OptionalLong kvEvictableTokens() {
    return tokens(Field.KV_EVICTABLE_TOKENS);
  }

  /** Whether the load's output rate is the engine's own gauge rather than a derived one. */
  boolean outputRateFromEngine() {
    return outputRateFromEngine;
  }

  /** A copy whose load has another output rate (from {@link ThroughputTracker}). */
  ModelMetrics withOutputTokensPerSecond(double rate) {
    return new ModelMetrics(name, load.toBuilder().outputTokensPerSecond(rate).build(),
        outputRateFromEngine, state, kvBlockSize, figures);
  }

  private OptionalDouble figure(Field field) {
    Double v = figures.get(field);
    return v == null ? OptionalDouble.empty() : OptionalDouble.of(v);
  }

  private OptionalInt count(Field field) {
    Double v = figures.get(field);
    return v == null ? OptionalInt.empty() : OptionalInt.of((int) Math.min(v, Integer.MAX_VALUE));
  }

  private OptionalLong tokens(Field field) {
    Double v = figures.get(field);
    return v == null ? OptionalLong.empty() : OptionalLong.of((long) Math.min(v, Long.MAX_VALUE));
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
        && kvBlockSize.equals(that.kvBlockSize) && figures.equals(that.figures);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, load, state, kvBlockSize, figures);
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("ModelMetrics{")
        .append(name.isEmpty() ? "<no model>" : name).append(", ").append(state).append(", ")
        .append(load).append(", blockSize=").append(kvBlockSize);
    figures.forEach((field, value) -> sb.append(", ").append(field).append('=').append(value));
    return sb.append('}').toString();
  }
}
