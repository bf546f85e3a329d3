package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.Replica;
import java.net.InetSocketAddress;
import java.net.URI;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.core.lifecycle.ModelClaim;
import io.affinityrouter.core.lifecycle.ModelLifecycle;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * What a {@link Gateway} listens on, routes to and how: the backends ({@code id=url}), an optional
 * Redis URI for bindings shared by several gateways (in-memory bindings without it), the session
 * and tenant headers, and its timings.
 *
 * <p>From the command line ({@link #fromArgs}): {@code --listen 127.0.0.1:8080 --backend
 * vllm-0=http://127.0.0.1:8001 --backend ... [--redis redis://127.0.0.1:6379]
 * [--session-header x-session-id] [--tenant-header x-tenant-id] [--scrape-interval-ms 100]
 * [--shutdown-grace-ms 10000] [--max-in-flight N] [--max-hold-ms 1000] [--max-held 10000]
 * [--store-timeout-ms 50]
 * [--response-timeout-ms 300000] [--header-timeout-ms 10000] [--body-timeout-ms 30000]
 * [--idle-timeout-ms 60000] [--max-header-bytes 16384] [--max-headers 100] [--max-threads 200]
 * [--tokenizer text|engine|local] [--tokenizer-model model=DIR]...
 * [--kv-events id=tcp://host:port[,replay=tcp://host:port]]...
 * [--claim model=NAME,memory=30GiB[,min=0][,max=N][,idle=5m][,level=1]]...
 * [--gpu-memory 80GiB] [--gpu-memory GROUP=80GiB]... [--gpu-group replica|host]
 * [--wake-cooldown-ms 30000] [--lifecycle-interval-ms 1000] [--gateway-id ID]}.
 *
 * <p>With {@link #claims()}, the gateway runs a model lifecycle ({@link ModelLifecycle}) that puts
 * idle models to sleep on their backends and wakes them where they fit.
 *
 * <p>Immutable and thread-safe; built with {@link #builder()}, whose setters refuse bad values with
 * an {@link IllegalArgumentException}.
 */
public final class GatewayConfig {
  /** Default session header: {@value}. */
  public static final String DEFAULT_SESSION_HEADER = "x-session-id";
  /** Default tenant header: {@value}. */
  public static final String DEFAULT_TENANT_HEADER = "x-tenant-id";
  /** Default scrape interval of every backend's {@code /metrics}: 100 ms. */
  public static final Duration DEFAULT_SCRAPE_INTERVAL = Duration.ofMillis(100);
  /** Default bound on the wait for in-flight requests at shutdown: 10 s. */
  public static final Duration DEFAULT_SHUTDOWN_GRACE = Duration.ofSeconds(10);
  /** Default time a backend that failed a request stays unhealthy, at least: 2 s. */
  public static final Duration DEFAULT_FAILURE_COOLDOWN = Duration.ofSeconds(2);
  /** Default timeout of connecting to a backend: 1 s. */
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(1);
  /** Default wait for a backend's response headers: 5 min (a long non-streamed generation). */
  public static final Duration DEFAULT_RESPONSE_TIMEOUT = Duration.ofMinutes(5);
  /** Default wait for the binding store per decision: 50 ms (the router's default). */
  public static final Duration DEFAULT_STORE_TIMEOUT = Duration.ofMillis(50);

  /** Default time a client has to send a request's headers, from their first byte: 10 s. */
  public static final Duration DEFAULT_HEADER_TIMEOUT = Duration.ofSeconds(10);
  /** Default time a client has to send a request's body, from the end of its headers: 30 s. */
  public static final Duration DEFAULT_BODY_TIMEOUT = Duration.ofSeconds(30);
  /** Default time a connection may sit without any byte read or written: 60 s. */
  public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofSeconds(60);
  /** Default bound on a request's line and headers together: {@value} bytes. */
  public static final int DEFAULT_MAX_HEADER_BYTES = 16 << 10;
  /** Default bound on a request's header fields: {@value}. */
  public static final int DEFAULT_MAX_HEADERS = 100;
  /** Default bound on the server's threads: {@value}. */
  public static final int DEFAULT_MAX_THREADS = 200;
  /** Default longest hold of a request while the fleet has no room for it. */
  public static final Duration DEFAULT_MAX_HOLD = AffinityRouter.Builder.DEFAULT_MAX_HOLD;
  /** Default most requests held at once. */
  public static final int DEFAULT_MAX_HELD = AffinityRouter.Builder.DEFAULT_MAX_HELD_REQUESTS;

  private final InetSocketAddress listen;
  private final Map<String, URI> backends;
  private final String redisUri;
  private final String sessionHeader;
  private final String tenantHeader;
  private final Duration scrapeInterval;
  private final Duration shutdownGrace;
  private final Duration failureCooldown;
  private final Duration connectTimeout;
  private final Duration storeTimeout;
  private final int maxInFlightPerBackend;
  private final Duration maxHold;
  private final int maxHeld;
  private final Duration responseTimeout;
  private final Duration headerTimeout;
  private final Duration bodyTimeout;
  private final Duration idleTimeout;
  private final int maxHeaderBytes;
  private final int maxHeaders;
  private final int maxThreads;
  private final Tokenization tokenization;
  private final Map<String, KvEvents> kvEvents;
  private final Map<String, Path> tokenizerModels;
  private final List<ModelClaim> claims;
  private final long gpuMemoryBytes;
  private final Map<String, Long> groupGpuMemoryBytes;
  private final GpuGrouping gpuGrouping;
  private final Duration wakeCooldown;
  private final Duration lifecycleInterval;
  private final String gatewayId;

  /** Which backends share one GPU group's memory in the model lifecycle. */
  public enum GpuGrouping {
    /** Each backend its own GPUs (the group's name is the backend's id). */
    REPLICA,
    /** The backends on one host share its GPUs (the group's name is the backend URL's host). */
    HOST
  }

  /** How a prompt becomes what the router hashes into blocks. */
  public enum Tokenization {
    /** The prompt's text (chat messages rendered in order): no round trip, blocks of characters. */
    TEXT,
    /**
     * The engine's own token ids, from a backend's {@code POST /tokenize} before routing: blocks
     * that match the engines' KV-cache events. A request with no {@code model} field, or whose
     * tokenization fails, is routed on its text.
     */
    ENGINE,
    /**
     * The same ids computed in the gateway ({@code InProcessTokenizer}) from each model's
     * HuggingFace files ({@link #tokenizerModels()}): no round trip. A request for another model,
     * or one its chat template rejects, is routed on its text.
     */
    LOCAL
  }

  /**
   * Where a backend publishes its KV-cache events ({@code tcp://host:port}) and, optionally, the
   * socket that replays missed ones.
   */
  public record KvEvents(URI publisher, Optional<URI> replay) {
    /** Checks both are {@code tcp://host:port}. */
    public KvEvents {
      Objects.requireNonNull(publisher, "publisher");
      Objects.requireNonNull(replay, "replay");
      tcp(publisher, "publisher");
      replay.ifPresent(r -> tcp(r, "replay"));
    }

    private static void tcp(URI uri, String name) {
      if (!"tcp".equals(uri.getScheme()) || uri.getHost() == null || uri.getPort() <= 0) {
        throw new IllegalArgumentException(name + ": " + uri + " (expected: tcp://host:port)");
      }
    }
  }

  private GatewayConfig(Builder b) {
    this.listen = b.listen;
    this.backends = Collections.unmodifiableMap(new LinkedHashMap<>(b.backends));
    this.redisUri = b.redisUri;
    this.sessionHeader = b.sessionHeader;
    this.tenantHeader = b.tenantHeader;
    this.scrapeInterval = b.scrapeInterval;
    this.shutdownGrace = b.shutdownGrace;
    this.failureCooldown = b.failureCooldown;
    this.connectTimeout = b.connectTimeout;
    this.storeTimeout = b.storeTimeout;
    this.maxInFlightPerBackend = b.maxInFlightPerBackend;
    this.maxHold = b.maxHold;
    this.maxHeld = b.maxHeld;
    this.responseTimeout = b.responseTimeout;
    this.headerTimeout = b.headerTimeout;
    this.bodyTimeout = b.bodyTimeout;
    this.idleTimeout = b.idleTimeout;
    this.maxHeaderBytes = b.maxHeaderBytes;
    this.maxHeaders = b.maxHeaders;
    this.maxThreads = b.maxThreads;
    this.tokenization = b.tokenization;
    this.kvEvents = Collections.unmodifiableMap(new LinkedHashMap<>(b.kvEvents));
    this.tokenizerModels = Collections.unmodifiableMap(new LinkedHashMap<>(b.tokenizerModels));
    this.claims = List.copyOf(b.claims.values());
    this.gpuMemoryBytes = b.gpuMemoryBytes;
    this.groupGpuMemoryBytes = Collections.unmodifiableMap(new LinkedHashMap<>(b.groupGpuMemory));
    this.gpuGrouping = b.gpuGrouping;
    this.wakeCooldown = b.wakeCooldown;
    this.lifecycleInterval = b.lifecycleInterval;
    this.gatewayId = b.gatewayId;
    if (b.tokenization == Tokenization.LOCAL && tokenizerModels.isEmpty()) {
      throw new IllegalArgumentException(
          "tokenization: LOCAL without tokenizer models (expected: at least one tokenizerModel)");
    }
    if (b.tokenization != Tokenization.LOCAL && !tokenizerModels.isEmpty()) {
      throw new IllegalArgumentException("tokenizerModels: given with tokenization "
          + b.tokenization + " (expected: LOCAL)");
    }
  }

  /** A builder listening on {@code 127.0.0.1:8080}, with no backends and the defaults. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Reads the command line.
   *
   * @throws IllegalArgumentException for an unknown flag or a bad value
   */
  public static GatewayConfig fromArgs(String[] args) {
    return GatewayFlags.parse(args);
  }

  /** The address the gateway listens on (port 0: an ephemeral port). */
  public InetSocketAddress listen() {
    return listen;
  }

  /** The backends by id, in the order given; each URI is the backend's base URL. */
  public Map<String, URI> backends() {
    return backends;
  }

  /** The Redis URI of the shared binding store, if any. */
  public Optional<String> redisUri() {
    return Optional.ofNullable(redisUri);
  }

  /** The request header carrying the session id. */
  public String sessionHeader() {
    return sessionHeader;
  }

  /** The request header carrying the tenant. */
  public String tenantHeader() {
    return tenantHeader;
  }

  /** How often every backend's {@code /metrics} is scraped. */
  public Duration scrapeInterval() {
    return scrapeInterval;
  }

  /** The longest wait for in-flight requests at shutdown. */
  public Duration shutdownGrace() {
    return shutdownGrace;
  }

  /**
   * How long a backend that failed (a request, or its scrapes) stays unhealthy before it is probed
   * again; the wait doubles with each failure in a row, up to 30 s.
   */
  public Duration failureCooldown() {
    return failureCooldown;
  }

  /** The timeout of connecting to a backend. */
  public Duration connectTimeout() {
    return connectTimeout;
  }

  /**
   * How long a decision waits for the binding store before routing degraded; with Redis, also the
   * store's command timeout.
   */
  public Duration storeTimeout() {
    return storeTimeout;
  }

  /**
   * The most requests in flight per backend (the router's limit: beyond it, a request is
   * {@code 429}); {@code 0} means no limit.
   */
  public int maxInFlightPerBackend() {
    return maxInFlightPerBackend;
  }

  /**
   * How long the router holds a request the fleet has no room for before answering {@code 429};
   * zero: never held, refused at once.
   */
  public Duration maxHold() {
    return maxHold;
  }

  /** The most requests held at once; more are refused at once. */
  public int maxHeld() {
    return maxHeld;
  }

  /**
   * How long the gateway waits for a backend's response headers (a streamed response sends them
   * at once; a whole one when it is done) before answering {@code 504}.
   */
  public Duration responseTimeout() {
    return responseTimeout;
  }

  /**
   * How long a client may take to send a request's headers, from their first byte; a connection
   * that takes longer is closed. Slow senders hold no thread meanwhile.
   */
  public Duration headerTimeout() {
    return headerTimeout;
  }

  /** How long a client may take to send a request's body, after its headers ({@code 408}). */
  public Duration bodyTimeout() {
    return bodyTimeout;
  }

  /** How long a connection may sit without a byte read or written before it is closed. */
  public Duration idleTimeout() {
    return idleTimeout;
  }

  /** The most bytes of a request's line and headers together ({@code 431} beyond). */
  public int maxHeaderBytes() {
    return maxHeaderBytes;
  }

  /** The most header fields of a request ({@code 431} beyond). */
  public int maxHeaders() {
    return maxHeaders;
  }

  /** The most threads of the server (requests proxied at once run on a separate pool). */
  public int maxThreads() {
    return maxThreads;
  }

  /** How prompts are tokenized for routing. */
  public Tokenization tokenization() {
    return tokenization;
  }

  /** The backends that publish KV-cache events, by id; the router indexes what they report. */
  public Map<String, KvEvents> kvEvents() {
    return kvEvents;
  }

  /**
   * With {@link Tokenization#LOCAL}, each model's directory of HuggingFace tokenizer files
   * ({@code tokenizer.json}, {@code tokenizer_config.json}), by model name.
   */
  public Map<String, Path> tokenizerModels() {
    return tokenizerModels;
  }

  /**
   * The models the lifecycle manages, in the order given; empty (the default): no lifecycle, a
   * sleeping model is woken where the router asks.
   */
  public List<ModelClaim> claims() {
    return claims;
  }

  /** GPU memory of each GPU group, in bytes, unless {@link #groupGpuMemoryBytes()} names it. */
  public OptionalLong gpuMemoryBytes() {
    return gpuMemoryBytes > 0 ? OptionalLong.of(gpuMemoryBytes) : OptionalLong.empty();
  }

  /** GPU memory of named GPU groups (backend ids, or hosts with {@link GpuGrouping#HOST}). */
  public Map<String, Long> groupGpuMemoryBytes() {
    return groupGpuMemoryBytes;
  }

  /** Which backends share one GPU group; {@link GpuGrouping#REPLICA} by default. */
  public GpuGrouping gpuGrouping() {
    return gpuGrouping;
  }

  /**
   * How long a copy the lifecycle woke stays awake at least, and a slept one asleep before queued
   * requests may wake it again; {@link ModelLifecycle#DEFAULT_WAKE_COOLDOWN} by default.
   */
  public Duration wakeCooldown() {
    return wakeCooldown;
  }

  /** Time between the lifecycle's rounds; {@link ModelLifecycle#DEFAULT_INTERVAL} by default. */
  public Duration lifecycleInterval() {
    return lifecycleInterval;
  }

  /**
   * This gateway's name among the gateways of a deployment (its holder name on the lifecycle's
   * lease), if given; a random one otherwise.
   */
  public Optional<String> gatewayId() {
    return Optional.ofNullable(gatewayId);
  }

  /** Builds a {@link GatewayConfig}. Not thread-safe. */
  public static final class Builder {
    private InetSocketAddress listen = new InetSocketAddress("127.0.0.1", 8080);
    private final Map<String, URI> backends = new LinkedHashMap<>();
    private String redisUri;
    private String sessionHeader = DEFAULT_SESSION_HEADER;
    private String tenantHeader = DEFAULT_TENANT_HEADER;
    private Duration scrapeInterval = DEFAULT_SCRAPE_INTERVAL;
    private Duration shutdownGrace = DEFAULT_SHUTDOWN_GRACE;
    private Duration failureCooldown = DEFAULT_FAILURE_COOLDOWN;
    private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
    private Duration storeTimeout = DEFAULT_STORE_TIMEOUT;
    private int maxInFlightPerBackend;
    private Duration maxHold = DEFAULT_MAX_HOLD;
    private int maxHeld = DEFAULT_MAX_HELD;
    private Duration responseTimeout = DEFAULT_RESPONSE_TIMEOUT;
    private Duration headerTimeout = DEFAULT_HEADER_TIMEOUT;
    private Duration bodyTimeout = DEFAULT_BODY_TIMEOUT;
    private Duration idleTimeout = DEFAULT_IDLE_TIMEOUT;
    private int maxHeaderBytes = DEFAULT_MAX_HEADER_BYTES;
    private int maxHeaders = DEFAULT_MAX_HEADERS;
    private int maxThreads = DEFAULT_MAX_THREADS;
    private Tokenization tokenization = Tokenization.TEXT;
    private final Map<String, KvEvents> kvEvents = new LinkedHashMap<>();
    private final Map<String, Path> tokenizerModels = new LinkedHashMap<>();
    private final Map<String, ModelClaim> claims = new LinkedHashMap<>();
    private long gpuMemoryBytes;
    private final Map<String, Long> groupGpuMemory = new LinkedHashMap<>();
    private GpuGrouping gpuGrouping = GpuGrouping.REPLICA;
    private Duration wakeCooldown = ModelLifecycle.DEFAULT_WAKE_COOLDOWN;
    private Duration lifecycleInterval = ModelLifecycle.DEFAULT_INTERVAL;
    private String gatewayId;

    private Builder() {}

    /**
     * Adds a model claim: the lifecycle keeps that model awake on between its minimum and maximum
     * backends and puts idle copies to sleep.
     *
     * @throws IllegalArgumentException if the model was already claimed
     */
    public Builder claim(ModelClaim claim) {
      Objects.requireNonNull(claim, "claim");
      if (claims.putIfAbsent(claim.model(), claim) != null) {
        throw new IllegalArgumentException("claim: " + claim.model()
            + " claimed twice (expected: one claim per model)");
      }
      return this;
    }

    /** Sets the GPU memory of every GPU group (required with claims); must be {@code > 0}. */
    public Builder gpuMemoryBytes(long bytes) {
      if (bytes <= 0) {
        throw new IllegalArgumentException("gpuMemory: " + bytes + " (expected: > 0)");
      }
      this.gpuMemoryBytes = bytes;
      return this;
    }

    /**
     * Sets the GPU memory of one GPU group, in place of {@link #gpuMemoryBytes(long)}.
     *
     * @throws IllegalArgumentException if {@code bytes <= 0}, the group is blank or already given
     */
    public Builder gpuMemoryBytes(String group, long bytes) {
      notBlank(group, "gpuMemory group");
      if (bytes <= 0) {
        throw new IllegalArgumentException("gpuMemory " + group + ": " + bytes
            + " (expected: > 0)");
      }
      if (groupGpuMemory.putIfAbsent(group, bytes) != null) {
        throw new IllegalArgumentException("gpuMemory: " + group
            + " given twice (expected: one value per group)");
      }
      return this;
    }

    /** Sets which backends share a GPU group ({@link GpuGrouping#REPLICA} by default). */
    public Builder gpuGrouping(GpuGrouping grouping) {
      this.gpuGrouping = Objects.requireNonNull(grouping, "gpuGrouping");
      return this;
    }

    /** Sets the lifecycle's wake cooldown; must be {@code >= 0}. */
    public Builder wakeCooldown(Duration cooldown) {
      Objects.requireNonNull(cooldown, "wakeCooldown");
      if (cooldown.isNegative()) {
        throw new IllegalArgumentException("wakeCooldown: " + cooldown + " (expected: >= 0)");
      }
      this.wakeCooldown = cooldown;
      return this;
    }

    /** Sets the time between the lifecycle's rounds; must be positive. */
    public Builder lifecycleInterval(Duration interval) {
      this.lifecycleInterval = positive(interval, "lifecycleInterval");
      return this;
    }

    /** Names this gateway among the deployment's gateways (its holder name on the lease). */
    public Builder gatewayId(String id) {
      this.gatewayId = notBlank(id, "gatewayId");
      return this;
    }

    /**
     * With {@link Tokenization#LOCAL}, tokenizes {@code model}'s requests from the HuggingFace
     * files in {@code directory}.
     *
     * @throws IllegalArgumentException if {@code model} is blank or was already given
     */
    public Builder tokenizerModel(String model, Path directory) {
      Objects.requireNonNull(model, "model");
      Objects.requireNonNull(directory, "directory");
      if (model.isBlank()) {
        throw new IllegalArgumentException("tokenizerModel: blank model (expected: a model name)");
      }
      if (tokenizerModels.putIfAbsent(model, directory) != null) {
        throw new IllegalArgumentException("tokenizerModel: " + model + " given twice");
      }
      return this;
    }

    /** Sets how prompts are tokenized for routing ({@link Tokenization#TEXT} by default). */
    public Builder tokenization(Tokenization tokenization) {
      this.tokenization = Objects.requireNonNull(tokenization, "tokenization");
      return this;
    }

    /**
     * Subscribes to a backend's KV-cache events.
     *
     * @throws IllegalArgumentException if events were already given for {@code backendId}
     */
    public Builder kvEvents(String backendId, KvEvents events) {
      Objects.requireNonNull(backendId, "backendId");
      Objects.requireNonNull(events, "events");
      if (kvEvents.putIfAbsent(backendId, events) != null) {
        throw new IllegalArgumentException("kvEvents: " + backendId
            + " (expected: one publisher per backend)");
      }
      return this;
    }

    /** Sets the listen address. */
    public Builder listen(InetSocketAddress listen) {
      this.listen = Objects.requireNonNull(listen, "listen");
      return this;
    }

    /**
     * Adds a backend.
     *
     * @throws IllegalArgumentException if the id is taken, blank or too long, or the URL is not
     *     {@code http://host:port}
     */
    public Builder backend(String id, URI baseUrl) {
      Replica.builder(id); // validates the id the router will key it by
      Objects.requireNonNull(baseUrl, "baseUrl");
      if (!"http".equals(baseUrl.getScheme()) || baseUrl.getHost() == null) {
        throw new IllegalArgumentException("backend " + id + ": " + baseUrl
            + " (expected: http://host:port)");
      }
      if (backends.putIfAbsent(id, baseUrl) != null) {
        throw new IllegalArgumentException("backend: " + id + " (expected: a unique id)");
      }
      return this;
    }

    /** Shares bindings through Redis at this URI ({@code redis://host:port}). */
    public Builder redisUri(String redisUri) {
      this.redisUri = notBlank(redisUri, "redisUri");
      return this;
    }

    /** Sets the session header. */
    public Builder sessionHeader(String header) {
      this.sessionHeader = notBlank(header, "sessionHeader");
      return this;
    }

    /** Sets the tenant header. */
    public Builder tenantHeader(String header) {
      this.tenantHeader = notBlank(header, "tenantHeader");
      return this;
    }

    /** Sets the scrape interval; must be positive. */
    public Builder scrapeInterval(Duration interval) {
      this.scrapeInterval = positive(interval, "scrapeInterval");
      return this;
    }

    /** Sets the shutdown grace; must be positive. */
    public Builder shutdownGrace(Duration grace) {
      this.shutdownGrace = positive(grace, "shutdownGrace");
      return this;
    }

    /** Sets how long a failed backend stays unhealthy; must be positive. */
    public Builder failureCooldown(Duration cooldown) {
      this.failureCooldown = positive(cooldown, "failureCooldown");
      return this;
    }

    /** Sets the backend connect timeout; must be positive. */
    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = positive(timeout, "connectTimeout");
      return this;
    }

    /** Sets the binding store timeout per decision; must be positive. */
    public Builder storeTimeout(Duration timeout) {
      this.storeTimeout = positive(timeout, "storeTimeout");
      return this;
    }

    /** Sets the wait for a backend's response headers; must be positive. */
    public Builder responseTimeout(Duration timeout) {
      this.responseTimeout = positive(timeout, "responseTimeout");
      return this;
    }

    /** Sets the header timeout; must be positive. */
    public Builder headerTimeout(Duration timeout) {
      this.headerTimeout = positive(timeout, "headerTimeout");
      return this;
    }

    /** Sets the body timeout; must be positive. */
    public Builder bodyTimeout(Duration timeout) {
      this.bodyTimeout = positive(timeout, "bodyTimeout");
      return this;
    }

    /** Sets the connection idle timeout; must be positive. */
    public Builder idleTimeout(Duration timeout) {
      this.idleTimeout = positive(timeout, "idleTimeout");
      return this;
    }

    /** Sets the bound on a request's line and headers; must be in 1024..1048576. */
    public Builder maxHeaderBytes(int bytes) {
      if (bytes < 1024 || bytes > 1 << 20) {
        throw new IllegalArgumentException("maxHeaderBytes: " + bytes
            + " (expected: 1024..1048576)");
      }
      this.maxHeaderBytes = bytes;
      return this;
    }

    /** Sets the bound on a request's header fields; must be {@code > 0}. */
    public Builder maxHeaders(int count) {
      if (count <= 0) {
        throw new IllegalArgumentException("maxHeaders: " + count + " (expected: > 0)");
      }
      this.maxHeaders = count;
      return this;
    }

    /** Sets the bound on the server's threads; must be at least 8. */
    public Builder maxThreads(int threads) {
      if (threads < 8) {
        throw new IllegalArgumentException("maxThreads: " + threads + " (expected: >= 8)");
      }
      this.maxThreads = threads;
      return this;
    }

    /** Sets the most requests in flight per backend; must be {@code > 0}. */
    public Builder maxInFlightPerBackend(int limit) {
      if (limit <= 0) {
        throw new IllegalArgumentException("maxInFlightPerBackend: " + limit + " (expected: > 0)");
      }
      this.maxInFlightPerBackend = limit;
      return this;
    }

    /** Sets the longest hold; must be {@code >= 0} ({@code 0}: requests are never held). */
    public Builder maxHold(Duration maxHold) {
      Objects.requireNonNull(maxHold, "maxHold");
      if (maxHold.isNegative()) {
        throw new IllegalArgumentException("maxHold: " + maxHold + " (expected: >= 0)");
      }
      this.maxHold = maxHold;
      return this;
    }

    /** Sets the most requests held at once; must be {@code > 0}. */
    public Builder maxHeld(int maxHeld) {
      if (maxHeld <= 0) {
        throw new IllegalArgumentException("maxHeld: " + maxHeld + " (expected: > 0)");
      }
      this.maxHeld = maxHeld;
      return this;
    }

    /**
     * Returns the configuration.
     *
     * @throws IllegalArgumentException if no backend was added
     */
    public GatewayConfig build() {
      if (backends.isEmpty()) {
        throw new IllegalArgumentException("backends: none (expected: at least one id=url)");
      }
      for (String id : kvEvents.keySet()) {
        if (!backends.containsKey(id)) {
          throw new IllegalArgumentException("kvEvents: " + id + " (expected: a backend's id)");
        }
      }
      checkLifecycle();
      return new GatewayConfig(this);
    }

    /** Claims need GPU memory, fitting at least one group; group names name backends or hosts. */
    private void checkLifecycle() {
      if (claims.isEmpty()) {
        if (gpuMemoryBytes > 0 || !groupGpuMemory.isEmpty()) {
          throw new IllegalArgumentException(
              "gpuMemory: given without claims (expected: at least one --claim)");
        }
        return;
      }
      List<String> groups = new ArrayList<>();
      for (Map.Entry<String, URI> e : backends.entrySet()) {
        String g = gpuGrouping == GpuGrouping.HOST ? e.getValue().getHost() : e.getKey();
        if (!groups.contains(g)) {
          groups.add(g);
        }
      }
      for (String g : groupGpuMemory.keySet()) {
        if (!groups.contains(g)) {
          throw new IllegalArgumentException("gpuMemory: group " + g + " (expected: "
              + (gpuGrouping == GpuGrouping.HOST ? "a backend's host" : "a backend's id")
              + ", one of " + groups + ")");
        }
      }
      long largest = 0;
      for (String g : groups) {
        long m = groupGpuMemory.getOrDefault(g, gpuMemoryBytes);
        if (m <= 0) {
          throw new IllegalArgumentException("gpuMemory: not set for group " + g
              + " (expected: --gpu-memory SIZE, or --gpu-memory " + g + "=SIZE, with claims)");
        }
        largest = Math.max(largest, m);
      }
      for (ModelClaim c : claims.values()) {
        if (c.gpuMemoryBytes() > largest) {
          throw new IllegalArgumentException("claim " + c.model() + ": memory "
              + c.gpuMemoryBytes() + " B (expected: <= the largest group's GPU memory, "
              + largest + " B)");
        }
      }
    }

    private static String notBlank(String s, String name) {
      if (s == null || s.isBlank()) {
        throw new IllegalArgumentException(name + ": " + (s == null ? "null" : "blank")
            + " (expected: a non-blank string)");
      }
      return s;
    }

    private static Duration positive(Duration d, String name) {
      if (d == null || d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(name + ": " + d + " (expected: > 0)");
      }
      return d;
    }
  }
}
