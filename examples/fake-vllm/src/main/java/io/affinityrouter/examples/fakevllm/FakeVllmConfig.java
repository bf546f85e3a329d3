package io.affinityrouter.examples.fakevllm;

import java.util.Objects;

/**
 * How a {@link FakeVllmServer} behaves: the model it serves, its simulated KV cache and its latency.
 *
 * <p>Latency of a request = {@code latencyScale × (uncachedPromptTokens × prefillMicrosPerToken +
 * outputTokens × decodeMicrosPerToken)} µs, the prefill part before the first token and the decode
 * part spread over the tokens. The defaults are of the order of a 7B model on one H100 (about 20 µs
 * per prefilled token, 7 ms per decode step, as the simulator's calibration); tests use a
 * small {@code latencyScale}. Prompt text counts {@value #CHARS_PER_TOKEN} characters per token, so
 * one cache block of {@code blockSize} tokens is {@code blockSize × CHARS_PER_TOKEN} characters.
 *
 * <p>Immutable and thread-safe; built with {@link #builder()}, whose setters refuse bad values with
 * an {@link IllegalArgumentException}.
 */
public final class FakeVllmConfig {
  /** Characters of prompt text per simulated token: {@value}. */
  public static final int CHARS_PER_TOKEN = 4;
  /** Default model name: {@value}. */
  public static final String DEFAULT_MODEL = "fake-llama-3-8b";
  /** Default tokens per KV block: {@value} (vLLM's default). */
  public static final int DEFAULT_BLOCK_SIZE = 16;
  /** Default KV blocks (the prefix cache's bound): {@value}. */
  public static final int DEFAULT_NUM_GPU_BLOCKS = 8192;
  /** Default prefill cost per uncached prompt token, µs: {@value}. */
  public static final double DEFAULT_PREFILL_MICROS_PER_TOKEN = 20;
  /** Default decode cost per output token, µs: {@value}. */
  public static final double DEFAULT_DECODE_MICROS_PER_TOKEN = 7000;
  /** Default output tokens when the request sets no {@code max_tokens}: {@value}. */
  public static final int DEFAULT_MAX_TOKENS = 16;
  /** Default most requests running at once; more wait: {@value}. */
  public static final int DEFAULT_MAX_NUM_SEQS = 256;

  private final String model;
  private final int blockSize;
  private final int numGpuBlocks;
  private final double prefillMicrosPerToken;
  private final double decodeMicrosPerToken;
  private final double latencyScale;
  private final int defaultMaxTokens;
  private final int maxNumSeqs;
  private final String apiKey;
  private final int kvEventsPort;
  private final int kvEventsReplayPort;
  private final java.nio.file.Path tokenizerDir;

  private FakeVllmConfig(Builder b) {
    this.model = b.model;
    this.blockSize = b.blockSize;
    this.numGpuBlocks = b.numGpuBlocks;
    this.prefillMicrosPerToken = b.prefillMicrosPerToken;
    this.decodeMicrosPerToken = b.decodeMicrosPerToken;
    this.latencyScale = b.latencyScale;
    this.defaultMaxTokens = b.defaultMaxTokens;
    this.maxNumSeqs = b.maxNumSeqs;
    this.apiKey = b.apiKey;
    this.kvEventsPort = b.kvEventsPort;
    this.tokenizerDir = b.tokenizerDir;
    this.kvEventsReplayPort = b.kvEventsReplayPort;
  }

  /** A builder with the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /** The served model's name ({@code model_name} in the metrics). */
  public String model() {
    return model;
  }

  /** Tokens per KV block. */
  public int blockSize() {
    return blockSize;
  }

  /** Characters of prompt text per KV block. */
  public int blockChars() {
    return blockSize * CHARS_PER_TOKEN;
  }

  /** KV blocks: the prefix cache holds at most this many. */
  public int numGpuBlocks() {
    return numGpuBlocks;
  }

  /** Prefill cost per uncached prompt token, µs (before scaling). */
  public double prefillMicrosPerToken() {
    return prefillMicrosPerToken;
  }

  /** Decode cost per output token, µs (before scaling). */
  public double decodeMicrosPerToken() {
    return decodeMicrosPerToken;
  }

  /** The factor applied to every latency (1 = the figures above; tests use small values). */
  public double latencyScale() {
    return latencyScale;
  }

  /** Output tokens of a request without {@code max_tokens}. */
  public int defaultMaxTokens() {
    return defaultMaxTokens;
  }

  /** The most requests running at once; later ones wait. */
  public int maxNumSeqs() {
    return maxNumSeqs;
  }

  /**
   * The API key completions require as {@code Authorization: Bearer <key>} (vLLM's
   * {@code --api-key}), if any.
   */
  public java.util.Optional<String> apiKey() {
    return java.util.Optional.ofNullable(apiKey);
  }

  /**
   * Whether the engine publishes its KV-cache events (vLLM's {@code --kv-events-config}
   * with {@code enable_kv_cache_events}), on {@link #kvEventsPort()} and
   * {@link #kvEventsReplayPort()}.
   */
  public boolean kvEvents() {
    return kvEventsPort >= 0;
  }

  /**
   * The directory of HuggingFace tokenizer files the engine tokenizes with (its chat template
   * included), as a real vLLM does; empty: {@link FakeTokenizer}'s character tokens.
   */
  public java.util.Optional<java.nio.file.Path> tokenizerDir() {
    return java.util.Optional.ofNullable(tokenizerDir);
  }

  /** The KV-event PUB port (0: an ephemeral one); -1 when the engine publishes none. */
  public int kvEventsPort() {
    return kvEventsPort;
  }

  /** The KV-event replay (ROUTER) port (0: an ephemeral one); -1 when none. */
  public int kvEventsReplayPort() {
    return kvEventsReplayPort;
  }

  /** Builds a {@link FakeVllmConfig}. Not thread-safe. */
  public static final class Builder {
    private String model = DEFAULT_MODEL;
    private int blockSize = DEFAULT_BLOCK_SIZE;
    private int numGpuBlocks = DEFAULT_NUM_GPU_BLOCKS;
    private double prefillMicrosPerToken = DEFAULT_PREFILL_MICROS_PER_TOKEN;
    private double decodeMicrosPerToken = DEFAULT_DECODE_MICROS_PER_TOKEN;
    private double latencyScale = 1;
    private int defaultMaxTokens = DEFAULT_MAX_TOKENS;
    private int maxNumSeqs = DEFAULT_MAX_NUM_SEQS;
    private String apiKey;
    private int kvEventsPort = -1;
    private int kvEventsReplayPort = -1;
    private java.nio.file.Path tokenizerDir;

    private Builder() {}

    /** Sets the model name; must not be blank. */
    public Builder model(String model) {
      Objects.requireNonNull(model, "model");
      if (model.isBlank()) {
        throw new IllegalArgumentException("model: blank (expected: a name)");
      }
      this.model = model;
      return this;
    }

    /** Sets tokens per block; must be {@code > 0}. */
    public Builder blockSize(int blockSize) {
      this.blockSize = positive(blockSize, "blockSize");
      return this;
    }

    /** Sets the number of KV blocks; must be {@code > 0}. */
    public Builder numGpuBlocks(int numGpuBlocks) {
      this.numGpuBlocks = positive(numGpuBlocks, "numGpuBlocks");
      return this;
    }

    /** Sets the prefill and decode costs in µs per token; finite and {@code >= 0}. */
    public Builder micros(double prefillPerToken, double decodePerToken) {
      this.prefillMicrosPerToken = nonNegative(prefillPerToken, "prefillMicrosPerToken");
      this.decodeMicrosPerToken = nonNegative(decodePerToken, "decodeMicrosPerToken");
      return this;
    }

    /** Sets the latency factor; finite and {@code >= 0} ({@code 0}: no simulated latency). */
    public Builder latencyScale(double latencyScale) {
      this.latencyScale = nonNegative(latencyScale, "latencyScale");
      return this;
    }

    /** Sets the output tokens of requests without {@code max_tokens}; must be {@code > 0}. */
    public Builder defaultMaxTokens(int defaultMaxTokens) {
      this.defaultMaxTokens = positive(defaultMaxTokens, "defaultMaxTokens");
      return this;
    }

    /** Sets the most requests running at once; must be {@code > 0}. */
    public Builder maxNumSeqs(int maxNumSeqs) {
      this.maxNumSeqs = positive(maxNumSeqs, "maxNumSeqs");
      return this;
    }

    /** Requires {@code Authorization: Bearer <apiKey>} on completions; must not be blank. */
    public Builder apiKey(String apiKey) {
      Objects.requireNonNull(apiKey, "apiKey");
      if (apiKey.isBlank()) {
        throw new IllegalArgumentException("apiKey: blank (expected: a key)");
      }
      this.apiKey = apiKey;
      return this;
    }

    /**
     * Publishes KV-cache events on {@code port} with replay on {@code replayPort}, each in
     * {@code 0..65535} (0: an ephemeral port).
     */
    public Builder kvEvents(int port, int replayPort) {
      this.kvEventsPort = port(port, "kvEventsPort");
      this.kvEventsReplayPort = port(replayPort, "kvEventsReplayPort");
      return this;
    }

    /**
     * Tokenizes with the HuggingFace files in {@code dir} ({@code tokenizer.json},
     * {@code tokenizer_config.json}): {@code /tokenize} and the KV events then carry the ids a
     * real engine serving that model computes.
     */
    public Builder tokenizerDir(java.nio.file.Path dir) {
      this.tokenizerDir = java.util.Objects.requireNonNull(dir, "dir");
      return this;
    }

    private static int port(int port, String name) {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException(name + ": " + port + " (expected: 0 to 65535)");
      }
      return port;
    }

    /** Returns the configuration. */
    public FakeVllmConfig build() {
      return new FakeVllmConfig(this);
    }

    private static int positive(int value, String name) {
      if (value <= 0) {
        throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
      }
      return value;
    }

    private static double nonNegative(double value, String name) {
      if (!(value >= 0) || Double.isInfinite(value)) {
        throw new IllegalArgumentException(name + ": " + value + " (expected: >= 0 and finite)");
      }
      return value;
    }
  }
}
