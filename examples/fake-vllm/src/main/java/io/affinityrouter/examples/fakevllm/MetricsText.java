package io.affinityrouter.examples.fakevllm;

/**
 * Renders a {@link FakeEngine}'s state as vLLM V1's Prometheus {@code /metrics} text: the families a
 * router reads, with vLLM's names, types, help texts and labels ({@code engine="0"},
 * {@code model_name}), and {@code cache_config_info} as an info gauge whose labels carry the block
 * size and the number of GPU blocks.
 *
 * <p>Stateless and thread-safe.
 */
final class MetricsText {
  private MetricsText() {}

  static String render(FakeEngine engine) {
    FakeVllmConfig c = engine.config();
    String labels = "engine=\"0\",model_name=\"" + escape(c.model()) + "\"";
    StringBuilder sb = new StringBuilder(2048);
    gauge(sb, "vllm:num_requests_running", "Number of requests in model execution batches.",
        labels, engine.running());
    gauge(sb, "vllm:num_requests_waiting", "Number of requests waiting to be processed.",
        labels, engine.waiting());
    gauge(sb, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
        labels, engine.kvUsage());
    counter(sb, "vllm:prefix_cache_queries",
        "Prefix cache queries, in terms of number of queried tokens.", labels,
        engine.prefixQueries());
    counter(sb, "vllm:prefix_cache_hits",
        "Prefix cache hits, in terms of number of cached tokens.", labels, engine.prefixHits());
    counter(sb, "vllm:prompt_tokens", "Number of prefill tokens processed.", labels,
        engine.promptTokens());
    counter(sb, "vllm:generation_tokens", "Number of generation tokens processed.", labels,
        engine.generationTokens());
    counter(sb, "vllm:request_success", "Count of successfully processed requests.",
        labels + ",finished_reason=\"length\"", engine.finished());
    int level = engine.sleepLevel();
    header(sb, "vllm:engine_sleep_state", "gauge",
        "Engine sleep state; awake = 0 means engine is sleeping; awake = 1 means engine is awake.");
    sample(sb, "vllm:engine_sleep_state", labels + ",sleep_state=\"awake\"", level == 0 ? 1 : 0);
    sample(sb, "vllm:engine_sleep_state", labels + ",sleep_state=\"weights_offloaded\"",
        level == 1 ? 1 : 0);
    sample(sb, "vllm:engine_sleep_state", labels + ",sleep_state=\"discard_all\"",
        level == 2 ? 1 : 0);
    header(sb, "vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig");
    sample(sb, "vllm:cache_config_info", "block_size=\"" + c.blockSize()
        + "\",cache_dtype=\"auto\",enable_prefix_caching=\"True\",engine=\"0\",num_gpu_blocks=\""
        + c.numGpuBlocks() + "\",prefix_caching_hash_algo=\"fnv1a\"", 1);
    return sb.toString();
  }

  private static void gauge(StringBuilder sb, String name, String help, String labels,
      double value) {
    header(sb, name, "gauge", help);
    sample(sb, name, labels, value);
  }

  private static void counter(StringBuilder sb, String name, String help, String labels,
      double value) {
    header(sb, name + "_total", "counter", help);
    sample(sb, name + "_total", labels, value);
  }

  private static void header(StringBuilder sb, String name, String type, String help) {
    sb.append("# HELP ").append(name).append(' ').append(help).append('\n');
    sb.append("# TYPE ").append(name).append(' ').append(type).append('\n');
  }

  private static void sample(StringBuilder sb, String name, String labels, double value) {
    sb.append(name).append('{').append(labels).append("} ")
        .append(Double.toString(value)).append('\n');
  }

  private static String escape(String labelValue) {
    return labelValue.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }
}
