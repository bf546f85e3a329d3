package io.affinityrouter.core.metrics;

import io.affinityrouter.ModelState;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.core.metrics.EngineFamilies.Family;
import io.affinityrouter.core.metrics.EngineFamilies.Field;
import io.affinityrouter.spi.ReplicaEndpoint.Engine;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * Maps parsed samples to {@link EngineMetrics}: groups the engine families of
 * {@link EngineFamilies} by {@code model_name}, sums them over engines, applies the engine-wide
 * {@code cache_config_info} to the models of each engine, and counts the values it had to skip or
 * alter (anomalies) so that {@link ReplicaLoad}'s builder never sees a value it refuses.
 *
 * <p>SGLang samples go through {@link SglangRanks} first, so that each data-parallel rank counts
 * once however many of its tensor- or pipeline-parallel ranks report it.
 *
 * <p>Not thread-safe: one instance maps one exposition, then is dropped.
 */
final class EngineMetricsMapper {
  private static final String MODEL_LABEL = "model_name";
  private static final String ENGINE_LABEL = "engine";
  /** vLLM V0 reports a hit rate of -1 before the first lookup. */
  private static final double NO_LOOKUPS_YET = -1.0;

  private final Map<String, ModelAccumulator> models = new TreeMap<>();
  private final Map<String, EngineConfig> configs = new HashMap<>();
  private final Set<SeriesKey> seen = new HashSet<>();
  private final Set<Engine> kinds = EnumSet.noneOf(Engine.class);
  private double loraTimestamp = Double.NEGATIVE_INFINITY;
  private Set<String> runningLora = Set.of();
  private Set<String> waitingLora = Set.of();
  private int anomalies;

  private EngineMetricsMapper() {}

  static EngineMetrics map(ParsedExposition parsed) {
    EngineMetricsMapper mapper = new EngineMetricsMapper();
    SglangRanks sglang = new SglangRanks();
    for (MetricSample sample : parsed.samples()) {
      Family family = EngineFamilies.of(sample.name());
      if (family != null && family.kind() == Engine.SGLANG) {
        sglang.offer(sample);
      } else {
        mapper.add(sample);
      }
    }
    sglang.samples().forEach(mapper::add);
    mapper.anomalies += sglang.repeats(); // a series twice: counting it again would double the load
    return mapper.result(parsed.skippedLines());
  }

  private void add(MetricSample sample) {
    Family family = EngineFamilies.of(sample.name());
    if (family == null) {
      return;
    }
    if (!seen.add(new SeriesKey(sample.name(), sample.labels()))) {
      anomalies++; // the same series twice: counting it again would double the load
      return;
    }
    kinds.add(family.kind());
    String engine = sample.labels().getOrDefault(ENGINE_LABEL, "");
    switch (family.field()) {
      case CACHE_CONFIG:
        addCacheConfig(engine, sample);
        return;
      case LORA_INFO:
        addLoraInfo(sample);
        return;
      default:
        break;
    }
    ModelAccumulator model = models.computeIfAbsent(
        sample.labels().getOrDefault(MODEL_LABEL, EngineMetrics.NO_MODEL),
        name -> new ModelAccumulator());
    model.engines.add(engine);
    double value = sample.value();
    switch (family.field()) {
      case SLEEP_STATE:
        addSleepState(model, sample.labels().getOrDefault("sleep_state", ""), value);
        break;
      case WAITING_BY_REASON:
        addSplit(model, sample.labels().get("reason"), value, "capacity", Field.WAITING_CAPACITY,
            "deferred", Field.WAITING_DEFERRED);
        break;
      case PROMPT_TOKENS_BY_SOURCE:
        addPromptSource(model, sample.labels().get("source"), value);
        break;
      case REALTIME_TOKENS:
        addRealtimeMode(model, sample.labels().get("mode"), value);
        break;
      case RUNNING:
      case WAITING:
      case KV_CAPACITY:
      case KV_USED_TOKENS:
      case KV_AVAILABLE_TOKENS:
      case KV_EVICTABLE_TOKENS:
        model.add(family.field(), count(value, 0));
        break;
      case BLOCK_SIZE:
        model.add(family.field(), count(value, 1));
        break;
      case KV_USAGE:
      case KV_USAGE_FULL:
      case KV_USAGE_V0:
        model.add(family.field(), fraction(value));
        break;
      case HIT_RATE:
        model.add(family.field(), value == NO_LOOKUPS_YET ? Double.NaN : fraction(value));
        break;
      default: // rates and counters
        model.add(family.field(), nonNegative(value));
    }
  }

  /** A request count split by a label; values other than the two known ones are not read. */
  private void addSplit(ModelAccumulator model, @Nullable String label, double value, String first,
      Field firstField, String second, Field secondField) {
    if (first.equals(label)) {
      model.add(firstField, count(value, 0));
    } else if (second.equals(label)) {
      model.add(secondField, count(value, 0));
    }
  }

  /** vLLM's {@code PromptTokenStats.ALL_SOURCES} ({@code vllm/v1/metrics/stats.py}). */
  private void addPromptSource(ModelAccumulator model, @Nullable String source, double value) {
    if ("local_compute".equals(source)) {
      model.add(Field.PROMPT_COMPUTED, nonNegative(value));
    } else if ("local_cache_hit".equals(source)) {
      model.add(Field.PROMPT_CACHE_HIT, nonNegative(value));
    } else if ("external_kv_transfer".equals(source)) {
      model.add(Field.PROMPT_TRANSFERRED, nonNegative(value));
    }
  }

  private void addRealtimeMode(ModelAccumulator model, @Nullable String mode, double value) {
    if ("prefill_compute".equals(mode)) {
      model.add(Field.PROMPT_COMPUTED, nonNegative(value));
    } else if ("prefill_cache".equals(mode)) {
      model.add(Field.PROMPT_CACHE_HIT, nonNegative(value));
    } else if ("decode".equals(mode)) {
      model.add(Field.DECODE_TOKENS, nonNegative(value));
    }
  }

  private void addSleepState(ModelAccumulator model, String sleepState, double value) {
    if (!Double.isFinite(value) || value < 0) {
      anomalies++;
      return;
    }
    switch (sleepState) {
      case "awake":
        model.sleeping |= value == 0;
        break;
      case "weights_offloaded":
      case "discard_all":
        model.sleeping |= value > 0;
        break;
      default:
        anomalies++; // a sleep state this parser does not know
    }
  }

  private void addCacheConfig(String engine, MetricSample sample) {
    long blockSize = labelAsCount(sample, "block_size");
    long capacity = labelAsCount(sample, "kv_cache_size_tokens");
    long blocks = labelAsCount(sample, "num_gpu_blocks");
    if (capacity < 0 && blockSize > 0 && blocks >= 0) {
      capacity = blocks > Long.MAX_VALUE / blockSize ? Long.MAX_VALUE : blocks * blockSize;
    }
    if (configs.putIfAbsent(engine, new EngineConfig((int) Math.min(blockSize, Integer.MAX_VALUE),
        capacity)) != null) {
      anomalies++; // two configurations for one engine: keep the first
    }
  }

  /** A label holding a count: -1 when absent or "None"; -1 and an anomaly when not a count. */
  private long labelAsCount(MetricSample sample, String label) {
    String text = sample.labels().get(label);
    if (text == null || text.equals("None")) {
      return -1;
    }
    Double value = ExpositionSyntax.parseValue(text);
    if (value == null || !(value >= 0) || value != Math.rint(value) || value >= 0x1p63) {
      anomalies++;
      return -1;
    }
    return value.longValue();
  }

  private void addLoraInfo(MetricSample sample) {
    double timestamp = sample.value(); // vLLM sets the gauge to the time of the last change
    if (Double.isNaN(timestamp)) {
      anomalies++;
      return;
    }
    if (timestamp >= loraTimestamp) {
      loraTimestamp = timestamp;
      runningLora = adapters(sample.labels().get("running_lora_adapters"));
      waitingLora = adapters(sample.labels().get("waiting_lora_adapters"));
    }
  }

  private static Set<String> adapters(@Nullable String list) {
    Set<String> names = new LinkedHashSet<>();
    if (list != null) {
      for (String name : list.split(",")) {
        if (!name.isBlank()) {
          names.add(name.strip());
        }
      }
    }
    return Set.copyOf(names);
  }

  /** A whole count {@code >= min}; rounded with an anomaly if fractional; else NaN. */
  private double count(double value, double min) {
    if (!Double.isFinite(value) || value < min) {
      anomalies++;
      return Double.NaN;
    }
    double rounded = Math.rint(value);
    if (rounded != value) {
      anomalies++;
    }
    return rounded;
  }

  /** A value in 0..1; clamped to 1 with an anomaly if above; else NaN. */
  private double fraction(double value) {
    if (!(value >= 0)) {
      anomalies++;
      return Double.NaN;
    }
    if (value > 1) {
      anomalies++;
      return 1;
    }
    return value;
  }

  /** A finite value {@code >= 0}; else NaN. */
  private double nonNegative(double value) {
    if (!Double.isFinite(value) || value < 0) {
      anomalies++;
      return Double.NaN;
    }
    return value;
  }

  private EngineMetrics result(int skippedLines) {
    Map<String, ModelMetrics> result = new TreeMap<>();
    models.forEach((name, model) -> result.put(name, model.build(name)));
    Engine kind = kinds.size() == 1 ? kinds.iterator().next() : Engine.UNKNOWN;
    return new EngineMetrics(kind, result, runningLora, waitingLora, skippedLines, anomalies);
  }

  /** A sample's identity: name and labels. */
  private record SeriesKey(String name, Map<String, String> labels) {}

  /** One engine's {@code cache_config_info}: block size and capacity, -1 when unknown. */
  private record EngineConfig(int blockSize, long capacityTokens) {}

  /** One model's figures, summed over its engines. */
  private final class ModelAccumulator {
    final Set<String> engines = new HashSet<>();
    final Map<Field, double[]> stats = new EnumMap<>(Field.class); // {sum, count, min}
    boolean sleeping;

    void add(Field field, double value) {
      if (Double.isNaN(value)) {
        return;
      }
      double[] s = stats.computeIfAbsent(field, f -> new double[] {0, 0, Double.MAX_VALUE});
      s[0] += value;
      s[1]++;
      s[2] = Math.min(s[2], value);
    }

    private OptionalDouble sum(Field field) {
      double[] s = stats.get(field);
      return s == null ? OptionalDouble.empty() : OptionalDouble.of(s[0]);
    }

    private OptionalDouble mean(Field field) {
      double[] s = stats.get(field);
      return s == null ? OptionalDouble.empty() : OptionalDouble.of(Math.min(1, s[0] / s[1]));
    }

    private OptionalDouble preferred(OptionalDouble value, OptionalDouble fallback) {
      return value.isPresent() ? value : fallback;
    }

    ModelMetrics build(String name) {
      ReplicaLoad.Builder load = ReplicaLoad.builder()
          .runningRequests(toInt(sum(Field.RUNNING)))
          .waitingRequests(toInt(sum(Field.WAITING)));
      OptionalDouble rate = sum(Field.OUTPUT_RATE);
      if (rate.isPresent() && Double.isFinite(rate.getAsDouble())) {
        load.outputTokensPerSecond(rate.getAsDouble());
      }
      long capacity = 0;
      int blockSize = Integer.MAX_VALUE;
      for (String engine : engines) {
        EngineConfig config = configs.getOrDefault(engine, configs.get(""));
        if (config != null) {
          capacity = saturatedAdd(capacity, Math.max(0, config.capacityTokens()));
          blockSize = config.blockSize() > 0 ? Math.min(blockSize, config.blockSize()) : blockSize;
        }
      }
      OptionalDouble reportedCapacity = sum(Field.KV_CAPACITY);
      OptionalDouble used = finite(sum(Field.KV_USED_TOKENS));
      OptionalDouble available = finite(sum(Field.KV_AVAILABLE_TOKENS));
      OptionalDouble evictable = finite(sum(Field.KV_EVICTABLE_TOKENS));
      if (reportedCapacity.isPresent()) {
        capacity = (long) Math.min(reportedCapacity.getAsDouble(), Long.MAX_VALUE);
      } else if (used.isPresent() && available.isPresent()) {
        // SGLang's pool: active + free + radix-cached slots (collector.py kv_*_tokens).
        capacity = (long) Math.min(used.getAsDouble() + available.getAsDouble()
            + evictable.orElse(0), Long.MAX_VALUE);
      }
      load.kvCapacityTokens(capacity);
      kvUsage(used, capacity).ifPresent(load::kvUsage);
      double[] pageSize = stats.get(Field.BLOCK_SIZE);
      if (pageSize != null) {
        blockSize = (int) Math.min(pageSize[2], Integer.MAX_VALUE);
      }
      Map<Field, Double> figures = new EnumMap<>(Field.class);
      OptionalDouble queries = put(figures, Field.PREFIX_QUERIES,
          finite(preferred(sum(Field.PREFIX_QUERIES), sum(Field.PREFIX_QUERIES_V0))));
      OptionalDouble hits = put(figures, Field.PREFIX_HITS,
          finite(preferred(sum(Field.PREFIX_HITS), sum(Field.PREFIX_HITS_V0))));
      put(figures, Field.HIT_RATE, mean(Field.HIT_RATE));
      OptionalDouble generated = put(figures, Field.GENERATION_TOKENS,
          finite(sum(Field.GENERATION_TOKENS)));
      for (Field f : COUNTERS) {
        put(figures, f, finite(sum(f)));
      }
      for (Field f : GAUGES) {
        put(figures, f, sum(f));
      }
      put(figures, Field.KV_USED_TOKENS, used);
      put(figures, Field.KV_AVAILABLE_TOKENS, available);
      put(figures, Field.KV_EVICTABLE_TOKENS, evictable);
      kvWritten(figures, queries, hits, generated).ifPresent(
          written -> load.kvWrittenTokens((long) Math.min(written, Long.MAX_VALUE)));
      return new ModelMetrics(name, load.build(), rate.isPresent(),
          sleeping ? ModelState.SLEEPING : ModelState.ACTIVE,
          blockSize == Integer.MAX_VALUE ? OptionalInt.empty() : OptionalInt.of(blockSize),
          figures);
    }

    /**
     * The fraction of KV in use: SGLang's active slots over its pool when it reports them, as
     * vLLM's {@code kv_cache_usage_perc} counts cached, unreferenced blocks as free; else its
     * full-attention pool's usage, the pool {@code max_total_num_tokens} measures (its
     * {@code token_usage} is the largest of the full, SWA and Mamba pools' on hybrid models); else
     * {@code token_usage} or vLLM's usage gauge.
     */
    private OptionalDouble kvUsage(OptionalDouble used, long capacity) {
      if (used.isPresent() && capacity > 0) {
        return OptionalDouble.of(fraction(used.getAsDouble() / capacity));
      }
      return preferred(mean(Field.KV_USAGE_FULL),
          preferred(mean(Field.KV_USAGE), mean(Field.KV_USAGE_V0)));
    }

    /**
     * Tokens written to the KV cache: the prompt tokens prefilled or loaded by a connector, and
     * every generated token. vLLM's {@code prompt_tokens_by_source_total} counts each scheduled
     * prefill once; without it, prefix-cache queries − hits stands in, which on vLLM before PR
     * #48860 adds a request's misses again at each scheduling retry, so it runs high exactly when
     * KV is short. SGLang's scheduler counts {@code realtime_tokens_total} as it runs (prefill
     * computed + decoded); without it, its per-request {@code prompt_tokens_total} −
     * {@code cached_tokens_total} + {@code generation_tokens_total} stands in.
     */
    private OptionalDouble kvWritten(Map<Field, Double> figures, OptionalDouble queries,
        OptionalDouble hits, OptionalDouble generated) {
      Double computed = figures.get(Field.PROMPT_COMPUTED);
      Double decoded = figures.get(Field.DECODE_TOKENS);
      if (computed != null && decoded != null) { // SGLang's scheduler counters
        return OptionalDouble.of(computed + decoded);
      }
      if (generated.isEmpty()) {
        return OptionalDouble.empty();
      }
      if (computed != null) {
        return OptionalDouble.of(computed + figures.getOrDefault(Field.PROMPT_TRANSFERRED, 0.0)
            + generated.getAsDouble());
      }
      if (queries.isPresent() && hits.isPresent()) {
        return OptionalDouble.of(Math.max(0, queries.getAsDouble() - hits.getAsDouble())
            + generated.getAsDouble());
      }
      Double prompt = figures.get(Field.PROMPT_TOKENS);
      Double cached = figures.get(Field.CACHED_PROMPT_TOKENS);
      if (prompt != null && cached != null) {
        return OptionalDouble.of(Math.max(0, prompt - cached) + generated.getAsDouble());
      }
      return OptionalDouble.empty();
    }

    private OptionalDouble put(Map<Field, Double> figures, Field field, OptionalDouble value) {
      value.ifPresent(v -> figures.put(field, v));
      return value;
    }

    /** A sum as an int, saturated at {@link Integer#MAX_VALUE} (an anomaly). */
    private int toInt(OptionalDouble sum) {
      double v = sum.orElse(0);
      if (v > Integer.MAX_VALUE) {
        anomalies++;
        return Integer.MAX_VALUE;
      }
      return (int) v;
    }

    /** A sum of finite values that overflowed to infinity is dropped (an anomaly). */
    private OptionalDouble finite(OptionalDouble sum) {
      if (sum.isPresent() && !Double.isFinite(sum.getAsDouble())) {
        anomalies++;
        return OptionalDouble.empty();
      }
      return sum;
    }
  }

  /** Counters read as they are, summed over ranks. */
  private static final Field[] COUNTERS = {Field.PROMPT_TOKENS, Field.PROMPT_COMPUTED,
      Field.PROMPT_CACHE_HIT, Field.PROMPT_TRANSFERRED, Field.DECODE_TOKENS,
      Field.CACHED_PROMPT_TOKENS, Field.PREEMPTIONS};
  /** Request-count gauges beyond {@link ReplicaLoad}'s, summed over ranks. */
  private static final Field[] GAUGES = {Field.WAITING_CAPACITY, Field.WAITING_DEFERRED};

  private static long saturatedAdd(long a, long b) {
    long r = a + b;
    return ((a ^ r) & (b ^ r)) < 0 ? Long.MAX_VALUE : r;
  }
}
