package io.affinityrouter.core.metrics;

import io.affinityrouter.spi.ReplicaEndpoint.Engine;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The vLLM and SGLang metric families {@link EngineMetrics} reads, by sample name, and what each
 * one feeds. One table, so the names live in one place.
 *
 * <p>Sources: vLLM {@code vllm/v1/metrics/loggers.py} (V1: {@code model_name} and {@code engine}
 * labels) and the V0 names it replaced; SGLang {@code python/sglang/srt/metrics/collector.py}
 * ({@code model_name}, {@code engine_type}, {@code tp_rank}, {@code pp_rank}, {@code moe_ep_rank}
 * and, with data parallelism, {@code dp_rank} labels). Immutable and thread-safe.
 */
final class EngineFamilies {
  private EngineFamilies() {}

  /** What a family feeds. */
  enum Field {
    RUNNING,
    WAITING,
    /**
     * vLLM's {@code num_requests_waiting_by_reason}; the mapper splits it by its {@code reason}
     * label into {@link #WAITING_CAPACITY} and {@link #WAITING_DEFERRED}.
     */
    WAITING_BY_REASON,
    /** Waiting for scheduling capacity ({@code reason="capacity"}). */
    WAITING_CAPACITY,
    /** Deferred by LoRA budget, KV transfer or a blocked status ({@code reason="deferred"}). */
    WAITING_DEFERRED,
    KV_USAGE,
    /**
     * SGLang's {@code full_token_usage}: the full-attention pool's usage, which
     * {@code max_total_num_tokens} measures; preferred to {@code token_usage}, which on hybrid
     * models is the largest of the pools' usages ({@code scheduler_metrics_mixin.py}).
     */
    KV_USAGE_FULL,
    /** SGLang's {@code kv_used_tokens}: KV slots held by running requests. */
    KV_USED_TOKENS,
    /** SGLang's {@code kv_available_tokens}: free KV slots. */
    KV_AVAILABLE_TOKENS,
    /** SGLang's {@code kv_evictable_tokens}: slots the radix cache holds but would give back. */
    KV_EVICTABLE_TOKENS,
    /** vLLM V0's {@code gpu_cache_usage_perc}; used when {@link #KV_USAGE} is absent. */
    KV_USAGE_V0,
    /** SGLang's {@code max_total_num_tokens}; vLLM's capacity comes from {@link #CACHE_CONFIG}. */
    KV_CAPACITY,
    /** SGLang's {@code page_size}; vLLM's block size comes from {@link #CACHE_CONFIG}. */
    BLOCK_SIZE,
    OUTPUT_RATE,
    PREFIX_QUERIES,
    /** vLLM's older {@code gpu_prefix_cache_queries}; used when {@link #PREFIX_QUERIES} is absent. */
    PREFIX_QUERIES_V0,
    PREFIX_HITS,
    /** vLLM's older {@code gpu_prefix_cache_hits}; used when {@link #PREFIX_HITS} is absent. */
    PREFIX_HITS_V0,
    HIT_RATE,
    GENERATION_TOKENS,
    PROMPT_TOKENS,
    /**
     * vLLM's {@code prompt_tokens_by_source_total}; the mapper splits it by its {@code source}
     * label into {@link #PROMPT_COMPUTED}, {@link #PROMPT_CACHE_HIT} and
     * {@link #PROMPT_TRANSFERRED}.
     */
    PROMPT_TOKENS_BY_SOURCE,
    /** Prompt tokens prefilled on the engine ({@code source="local_compute"}). */
    PROMPT_COMPUTED,
    /** Prompt tokens served from the engine's prefix cache ({@code source="local_cache_hit"}). */
    PROMPT_CACHE_HIT,
    /** Prompt tokens loaded by a KV connector ({@code source="external_kv_transfer"}). */
    PROMPT_TRANSFERRED,
    /**
     * SGLang's {@code realtime_tokens_total}, counted by the scheduler as it runs; the mapper splits
     * it by its {@code mode} label into {@link #PROMPT_COMPUTED} ({@code prefill_compute}),
     * {@link #PROMPT_CACHE_HIT} ({@code prefill_cache}) and {@link #DECODE_TOKENS}.
     */
    REALTIME_TOKENS,
    /** Tokens decoded, as the scheduler runs them ({@code mode="decode"}). */
    DECODE_TOKENS,
    /** SGLang's {@code cached_tokens_total}: prompt tokens found cached, counted per request. */
    CACHED_PROMPT_TOKENS,
    /**
     * Requests evicted from the running batch for want of KV: vLLM's {@code num_preemptions_total},
     * SGLang's {@code num_retracted_requests_total}.
     */
    PREEMPTIONS,
    /** vLLM's {@code engine_sleep_state{sleep_state=awake|weights_offloaded|discard_all}}. */
    SLEEP_STATE,
    /** vLLM's {@code cache_config_info}: engine-wide, labelled by {@code engine}, no model. */
    CACHE_CONFIG,
    /** vLLM's {@code lora_requests_info}: replica-wide, no model label. */
    LORA_INFO
  }

  /**
   * A mapped family.
   *
   * @param kind the engine that exposes it
   * @param field what it feeds
   * @param legacy whether current vLLM (v0.26.0) no longer exposes it
   */
  record Family(Engine kind, Field field, boolean legacy) {}

  /** Sample names (counters with their {@code _total} suffix) to families. */
  static final Map<String, Family> BY_SAMPLE_NAME = table();

  /** The family of sample {@code name}, or {@code null} if the engine parsers ignore it. */
  static @Nullable Family of(String name) {
    return BY_SAMPLE_NAME.get(name);
  }

  private static Map<String, Family> table() {
    Map<String, Family> t = new LinkedHashMap<>();
    vllm(t, "num_requests_running", Field.RUNNING, false);
    vllm(t, "num_requests_waiting", Field.WAITING, false);
    vllm(t, "num_requests_waiting_by_reason", Field.WAITING_BY_REASON, false);
    vllm(t, "kv_cache_usage_perc", Field.KV_USAGE, false);
    vllm(t, "gpu_cache_usage_perc", Field.KV_USAGE_V0, true);
    vllm(t, "prefix_cache_queries_total", Field.PREFIX_QUERIES, false);
    vllm(t, "gpu_prefix_cache_queries_total", Field.PREFIX_QUERIES_V0, true);
    vllm(t, "prefix_cache_hits_total", Field.PREFIX_HITS, false);
    vllm(t, "gpu_prefix_cache_hits_total", Field.PREFIX_HITS_V0, true);
    vllm(t, "gpu_prefix_cache_hit_rate", Field.HIT_RATE, true);
    vllm(t, "generation_tokens_total", Field.GENERATION_TOKENS, false);
    vllm(t, "prompt_tokens_total", Field.PROMPT_TOKENS, false);
    vllm(t, "prompt_tokens_by_source_total", Field.PROMPT_TOKENS_BY_SOURCE, false);
    vllm(t, "num_preemptions_total", Field.PREEMPTIONS, false);
    vllm(t, "engine_sleep_state", Field.SLEEP_STATE, false);
    vllm(t, "cache_config_info", Field.CACHE_CONFIG, false);
    vllm(t, "lora_requests_info", Field.LORA_INFO, false);
    for (String prefix : new String[] {"sglang:", "sglang_"}) {
      sglang(t, prefix, "num_running_reqs", Field.RUNNING);
      sglang(t, prefix, "num_queue_reqs", Field.WAITING);
      sglang(t, prefix, "token_usage", Field.KV_USAGE);
      sglang(t, prefix, "full_token_usage", Field.KV_USAGE_FULL);
      sglang(t, prefix, "kv_used_tokens", Field.KV_USED_TOKENS);
      sglang(t, prefix, "kv_available_tokens", Field.KV_AVAILABLE_TOKENS);
      sglang(t, prefix, "kv_evictable_tokens", Field.KV_EVICTABLE_TOKENS);
      sglang(t, prefix, "max_total_num_tokens", Field.KV_CAPACITY);
      sglang(t, prefix, "page_size", Field.BLOCK_SIZE);
      sglang(t, prefix, "gen_throughput", Field.OUTPUT_RATE);
      sglang(t, prefix, "cache_hit_rate", Field.HIT_RATE);
      sglang(t, prefix, "generation_tokens_total", Field.GENERATION_TOKENS);
      sglang(t, prefix, "prompt_tokens_total", Field.PROMPT_TOKENS);
      sglang(t, prefix, "num_retracted_requests_total", Field.PREEMPTIONS);
      sglang(t, prefix, "realtime_tokens_total", Field.REALTIME_TOKENS);
      sglang(t, prefix, "cached_tokens_total", Field.CACHED_PROMPT_TOKENS);
    }
    return Map.copyOf(t);
  }

  /** vLLM's names, and the same with {@code vllm_}, as exporters that forbid colons write them. */
  private static void vllm(Map<String, Family> t, String name, Field field, boolean legacy) {
    t.put("vllm:" + name, new Family(Engine.VLLM, field, legacy));
    t.put("vllm_" + name, new Family(Engine.VLLM, field, legacy));
  }

  private static void sglang(Map<String, Family> t, String prefix, String name, Field field) {
    t.put(prefix + name, new Family(Engine.SGLANG, field, false));
  }
}
