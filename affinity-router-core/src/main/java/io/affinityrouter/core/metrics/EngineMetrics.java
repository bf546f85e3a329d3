package io.affinityrouter.core.metrics;

import io.affinityrouter.ModelState;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.spi.ReplicaEndpoint.Engine;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * One scrape of a vLLM or SGLang {@code /metrics} endpoint, read into a {@link ModelMetrics} per
 * {@code model_name} and a whole-replica {@link ReplicaLoad}.
 *
 * <p>Families read (vLLM V1 names first, then the older names used when the newer is absent; SGLang
 * under both its {@code sglang:} and {@code sglang_} prefixes). Sources: vLLM
 * {@code vllm/v1/metrics/loggers.py}, SGLang {@code python/sglang/srt/metrics/collector.py}.
 *
 * <table>
 *   <caption>Where each figure comes from</caption>
 *   <tr><th>figure</th><th>vLLM</th><th>SGLang</th></tr>
 *   <tr><td>running</td><td>{@code num_requests_running}</td><td>{@code num_running_reqs}</td></tr>
 *   <tr><td>waiting</td><td>{@code num_requests_waiting}</td><td>{@code num_queue_reqs}</td></tr>
 *   <tr><td>waiting for capacity, deferred ({@link ModelMetrics#waitingForCapacity()})</td>
 *       <td>{@code num_requests_waiting_by_reason{reason}}</td><td>—</td></tr>
 *   <tr><td>KV usage</td><td>{@code kv_cache_usage_perc}, {@code gpu_cache_usage_perc}</td>
 *       <td>{@code kv_used_tokens} over the capacity, else {@code full_token_usage}, else
 *       {@code token_usage}</td></tr>
 *   <tr><td>KV capacity</td><td>{@code cache_config_info}: {@code kv_cache_size_tokens}, else
 *       {@code block_size × num_gpu_blocks}</td><td>{@code max_total_num_tokens}, else
 *       {@code kv_used_tokens + kv_available_tokens + kv_evictable_tokens}</td></tr>
 *   <tr><td>KV slots used, free, evictable</td><td>—</td><td>{@code kv_used_tokens},
 *       {@code kv_available_tokens}, {@code kv_evictable_tokens}</td></tr>
 *   <tr><td>block size</td><td>{@code cache_config_info{block_size}}</td>
 *       <td>{@code page_size}</td></tr>
 *   <tr><td>output tokens/s</td><td>({@link ThroughputTracker})</td>
 *       <td>{@code gen_throughput}</td></tr>
 *   <tr><td>prefix-cache counters</td><td>{@code prefix_cache_queries_total},
 *       {@code prefix_cache_hits_total}, {@code gpu_prefix_cache_*_total}</td><td>—</td></tr>
 *   <tr><td>hit rate</td><td>{@code gpu_prefix_cache_hit_rate}</td>
 *       <td>{@code cache_hit_rate}</td></tr>
 *   <tr><td>token counters</td><td colspan="2">{@code generation_tokens_total},
 *       {@code prompt_tokens_total}</td></tr>
 *   <tr><td>prompt tokens computed, cache hits, transferred</td>
 *       <td>{@code prompt_tokens_by_source_total{source}}</td>
 *       <td>{@code realtime_tokens_total{mode}} (no transfers)</td></tr>
 *   <tr><td>cached prompt tokens</td><td>—</td><td>{@code cached_tokens_total}</td></tr>
 *   <tr><td>preemptions</td><td>{@code num_preemptions_total}</td>
 *       <td>{@code num_retracted_requests_total}</td></tr>
 *   <tr><td>KV written ({@link ReplicaLoad#kvWrittenTokens()}, summed over models in
 *       {@link #replicaLoad()} when each has it)</td><td>{@code local_compute +
 *       external_kv_transfer} prompt tokens + {@code generation_tokens_total}; else prefix-cache
 *       queries − hits + {@code generation_tokens_total}</td><td>{@code prefill_compute +
 *       decode} realtime tokens; else {@code prompt_tokens_total − cached_tokens_total +
 *       generation_tokens_total}</td></tr>
 *   <tr><td>state</td><td>{@code engine_sleep_state}</td><td>—</td></tr>
 *   <tr><td>LoRA adapters</td><td>{@code lora_requests_info}</td><td>—</td></tr>
 * </table>
 *
 * <p>KV written: vLLM's prefix-cache counters before PR #48860 count a request again at every
 * scheduling retry (no free blocks, no token budget, a KV connector deferring it), so the fallback
 * runs high, by the retried requests' misses, exactly when KV is short; {@code
 * prompt_tokens_by_source_total} counts each scheduled prefill once and is preferred. SGLang's KV
 * usage counts the radix cache's evictable slots as free, as vLLM's usage counts cached,
 * unreferenced blocks; its {@code token_usage} is the largest of the full-attention, SWA and Mamba
 * pools' usages on hybrid models, so it is read only when neither the slot counts nor
 * {@code full_token_usage} (the pool {@code max_total_num_tokens} measures) are there.
 *
 * <p>Aggregation: a model's samples of one family are summed over their label sets (vLLM V1's
 * data-parallel {@code engine} label, SGLang's {@code dp_rank}), except KV usage and hit rate,
 * which are averaged as vLLM's own aggregated logger does (SGLang's slot counts are summed, then
 * divided), and the block size, the smallest. SGLang series that differ only in {@code tp_rank},
 * {@code pp_rank} or {@code moe_ep_rank} are one data-parallel replica's figures, repeated by each
 * rank under {@code --enable-metrics-for-all-schedulers}: the lowest rank's is read, the others
 * dropped. {@code cache_config_info} carries
 * no model label: each model gets the configuration of its engines (matched by {@code engine};
 * one without the label applies to every engine). A model is {@link ModelState#SLEEPING} when any
 * of its engines reports {@code engine_sleep_state{sleep_state="awake"} 0} or a positive
 * {@code weights_offloaded}/{@code discard_all}. Samples without a {@code model_name} label go
 * under {@link #NO_MODEL}.
 *
 * <p>Anomalies: values {@link ReplicaLoad} refuses or that make no sense (NaN, negative, infinite,
 * a fractional request count, a usage above 1, a series repeated) are skipped, or clamped where a
 * nearest sane value exists, and counted in {@link #anomalies()}; vLLM's {@code -1} hit rate (no
 * lookups yet) is read as "not reported", not as an anomaly. Nothing here throws for bad data.
 *
 * <p>Immutable and thread-safe.
 */
public final class EngineMetrics {
  /** The key of figures whose samples carry no {@code model_name} label: {@value}. */
  public static final String NO_MODEL = "";

  private final Engine engine;
  private final Map<String, ModelMetrics> models;
  private final Set<String> runningLoraAdapters;
  private final Set<String> waitingLoraAdapters;
  private final int skippedLines;
  private final int anomalies;
  private final ReplicaLoad replicaLoad;

  EngineMetrics(Engine engine, Map<String, ModelMetrics> models,
      Set<String> runningLoraAdapters, Set<String> waitingLoraAdapters, int skippedLines,
      int anomalies) {
    this.engine = engine;
    this.models = Collections.unmodifiableMap(new LinkedHashMap<>(models));
    this.runningLoraAdapters = Set.copyOf(runningLoraAdapters);
    this.waitingLoraAdapters = Set.copyOf(waitingLoraAdapters);
    this.skippedLines = skippedLines;
    this.anomalies = anomalies;
    this.replicaLoad = aggregate(this.models.values());
  }

  /**
   * Reads a {@code /metrics} body, skipping malformed lines ({@link #skippedLines()}). The mode for
   * production scrapes: one bad line never costs the whole snapshot.
   *
   * @throws NullPointerException if {@code text} is null
   */
  public static EngineMetrics parse(CharSequence text) {
    return of(PrometheusTextParser.parseLenient(text));
  }

  /**
   * Reads a {@code /metrics} body that must be well-formed.
   *
   * @throws IllegalArgumentException at the first line that breaks the text format
   * @throws NullPointerException if {@code text} is null
   */
  public static EngineMetrics parseStrict(CharSequence text) {
    return of(PrometheusTextParser.parseStrict(text));
  }

  /**
   * Maps samples already parsed (use this to log {@link ParsedExposition#firstProblem()}).
   *
   * @throws NullPointerException if {@code parsed} is null
   */
  static EngineMetrics of(ParsedExposition parsed) {
    return EngineMetricsMapper.map(Objects.requireNonNull(parsed, "parsed"));
  }

  /** The engine the families came from. */
  public Engine engine() {
    return engine;
  }

  /** Each model's figures, by {@code model_name} in name order; unmodifiable. */
  public Map<String, ModelMetrics> models() {
    return models;
  }

  /** The figures of {@code modelName}, if the scrape has any. */
  public Optional<ModelMetrics> model(String modelName) {
    return Optional.ofNullable(models.get(modelName));
  }

  /** Each model's load, by {@code model_name} in name order; unmodifiable. */
  public Map<String, ReplicaLoad> loads() {
    Map<String, ReplicaLoad> loads = new LinkedHashMap<>();
    models.forEach((name, m) -> loads.put(name, m.load()));
    return Collections.unmodifiableMap(loads);
  }

  /**
   * Each named model's state, ready for {@code Replica.Builder.models(...)}: {@link #NO_MODEL} is
   * left out, as a replica's model names must not be blank; unmodifiable.
   */
  public Map<String, ModelState> modelStates() {
    Map<String, ModelState> states = new LinkedHashMap<>();
    models.forEach((name, m) -> {
      if (!name.isBlank()) {
        states.put(name, m.state());
      }
    });
    return Collections.unmodifiableMap(states);
  }

  /**
   * The whole replica's load across its models: requests, capacities and output rates summed; KV
   * usage averaged weighted by capacity when every model reporting usage reports its capacity,
   * else plainly; {@link ReplicaLoad#UNKNOWN} when the scrape has no model.
   */
  public ReplicaLoad replicaLoad() {
    return replicaLoad;
  }

  /** LoRA adapters in the running batch, per the newest {@code vllm:lora_requests_info}. */
  public Set<String> runningLoraAdapters() {
    return runningLoraAdapters;
  }

  /** LoRA adapters of waiting requests, per the newest {@code vllm:lora_requests_info}. */
  public Set<String> waitingLoraAdapters() {
    return waitingLoraAdapters;
  }

  /** Malformed lines skipped by the lenient parse ({@code 0} after a strict one). */
  public int skippedLines() {
    return skippedLines;
  }

  /** Values skipped or clamped because they were NaN, negative, out of range or repeated. */
  public int anomalies() {
    return anomalies;
  }

  /** A copy with other per-model figures (output rates from {@link ThroughputTracker}). */
  EngineMetrics withModels(Map<String, ModelMetrics> newModels) {
    return new EngineMetrics(engine, newModels, runningLoraAdapters, waitingLoraAdapters,
        skippedLines, anomalies);
  }

  private static ReplicaLoad aggregate(Collection<ModelMetrics> models) {
    if (models.isEmpty()) {
      return ReplicaLoad.UNKNOWN;
    }
    long running = 0;
    long waiting = 0;
    long capacity = 0;
    double rate = 0;
    double usageSum = 0;
    double weightedUsage = 0;
    double usageWeight = 0;
    int usageCount = 0;
    boolean weighted = true;
    long written = 0; // -1 once a model has no counter: a partial sum would run backwards
    for (ModelMetrics m : models) {
      ReplicaLoad load = m.load();
      written = written < 0 || load.kvWrittenTokens() < 0 ? -1
          : saturatedAdd(written, load.kvWrittenTokens());
      running += load.runningRequests();
      waiting += load.waitingRequests();
      capacity = load.kvCapacityTokens() > Long.MAX_VALUE - capacity
          ? Long.MAX_VALUE : capacity + load.kvCapacityTokens();
      rate += load.outputTokensPerSecond();
      if (load.kvUsage().isPresent()) {
        double usage = load.kvUsage().getAsDouble();
        usageSum += usage;
        usageCount++;
        weightedUsage += usage * load.kvCapacityTokens();
        usageWeight += load.kvCapacityTokens();
        weighted &= load.kvCapacityTokens() > 0;
      }
    }
    ReplicaLoad.Builder b = ReplicaLoad.builder()
        .runningRequests((int) Math.min(running, Integer.MAX_VALUE))
        .waitingRequests((int) Math.min(waiting, Integer.MAX_VALUE))
        .kvCapacityTokens(capacity)
        .outputTokensPerSecond(Double.isFinite(rate) ? rate : Double.MAX_VALUE);
    if (written >= 0) {
      b.kvWrittenTokens(written);
    }
    if (usageCount > 0) {
      b.kvUsage(Math.min(1, weighted ? weightedUsage / usageWeight : usageSum / usageCount));
    }
    return b.build();
  }

  private static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof EngineMetrics)) {
      return false;
    }
    EngineMetrics that = (EngineMetrics) o;
    return engine == that.engine && models.equals(that.models)
        && runningLoraAdapters.equals(that.runningLoraAdapters)
        && waitingLoraAdapters.equals(that.waitingLoraAdapters)
        && skippedLines == that.skippedLines && anomalies == that.anomalies;
  }

  @Override
  public int hashCode() {
    return Objects.hash(engine, models, skippedLines, anomalies);
  }

  @Override
  public String toString() {
    return "EngineMetrics{" + engine + ", models=" + models.values()
        + (runningLoraAdapters.isEmpty() ? "" : ", runningLora=" + runningLoraAdapters)
        + ", skippedLines=" + skippedLines + ", anomalies=" + anomalies + '}';
  }
}
