package io.affinityrouter.examples.gateway.config;

import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.core.EngineProfile;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code affinity-router.*} Spring properties: how the gateway reads requests, scrapes replicas,
 * and configures the router. Router options left unset keep the builder's defaults
 * ({@link AffinityRouter.Builder}'s {@code DEFAULT_*} constants, listed in the module README), so the
 * defaults live in one place; {@link #applyTo} passes the set ones on, and the builder validates
 * them ({@link IllegalArgumentException} such as {@code "topK: 0 (expected: > 0)"} at startup).
 *
 * <p>Immutable and thread-safe (bound once by Spring Boot).
 *
 * @param sessionHeader the request header carrying the session id; default {@code x-session-id}
 * @param tenantHeader the request header carrying the tenant; default {@code x-tenant-id}
 * @param scrape how replicas' {@code /metrics} are scraped
 * @param redisUri the Redis binding store shared by the gateways of a fleet, as a Lettuce URI
 *     ({@code redis://[user:password@]host:port}, {@code rediss://...},
 *     {@code redis-sentinel://host:port[,host:port]#master}); unset (default): an in-memory store,
 *     which only suits a single gateway
 * @param engine the calibration of the engines behind the gateway ({@code affinity-router.engine.*})
 * @param topK how many of the cheapest replicas the picker draws from (default 5)
 * @param maxInFlightRequests the in-flight request limit per replica (default unlimited)
 * @param maxInFlightTokens the in-flight token limit per replica (default unlimited)
 * @param bindingTtl the sliding time to live of session bindings (default 1 h)
 * @param storeTimeout how long a decision waits for the binding store (default 50 ms)
 * @param rampUp the traffic ramp of freshly ready replicas (default 60 s; 0 disables it)
 * @param minRampWeight the weight of a replica that just became ready (default 0.1)
 * @param atLimitRetryAfter the {@code Retry-After} of {@code 429} answers (default 1 s)
 * @param unavailableRetryAfter the {@code Retry-After} of {@code 503} answers (default 5 s)
 * @param textBlockChars characters per block of text prompts (default 64)
 * @param maxPromptBlocks the most blocks hashed per prompt (default 8192)
 * @param hashSeed the seed of the prefix hashes; gateways sharing a fleet use one (default 0)
 * @param prefixIndexEntries the prefix index bound in blocks (default 1048576)
 * @param maxHold how long a request the fleet has no room for is held before its {@code 429};
 *     unset or 0 (default): never held, refused at once
 * @param maxHeldRequests the most requests held at once (default 10000), with {@code maxHold}
 * @param tokenizerModels per model the backends serve, the directory of its HuggingFace tokenizer
 *     files ({@code tokenizer.json}, {@code tokenizer_config.json}): requests for it are routed
 *     on the ids the engine computes ({@code affinity-router.tokenizer-models.[Qwen/Qwen3-8B]=DIR});
 *     unset (default): prompts are routed on their text
 * @param kvEvents subscribe to the KV-cache events of replicas whose instance metadata names a
 *     publisher ({@code kv-events: tcp://host:5557}); default true
 */
@ConfigurationProperties("affinity-router")
public record AffinityRouterProperties(
    @DefaultValue("x-session-id") String sessionHeader,
    @DefaultValue("x-tenant-id") String tenantHeader,
    @DefaultValue Scrape scrape,
    @Nullable String redisUri,
    @DefaultValue Engine engine,
    @Nullable Integer topK,
    @Nullable Integer maxInFlightRequests,
    @Nullable Long maxInFlightTokens,
    @Nullable Duration bindingTtl,
    @Nullable Duration storeTimeout,
    @Nullable Duration rampUp,
    @Nullable Double minRampWeight,
    @Nullable Duration atLimitRetryAfter,
    @Nullable Duration unavailableRetryAfter,
    @Nullable Integer textBlockChars,
    @Nullable Integer maxPromptBlocks,
    @Nullable Long hashSeed,
    @Nullable Long prefixIndexEntries,
    @Nullable Duration maxHold,
    @Nullable Integer maxHeldRequests,
    @Nullable Map<String, Path> tokenizerModels,
    @DefaultValue("true") boolean kvEvents) {

  /**
   * Checks the gateway's own properties (the router's are checked by the builder).
   *
   * @throws IllegalArgumentException if a header name is blank
   */
  public AffinityRouterProperties {
    if (sessionHeader == null || sessionHeader.isBlank()) {
      throw new IllegalArgumentException(
          "affinity-router.session-header: '" + sessionHeader + "' (expected: a header name)");
    }
    if (tenantHeader == null || tenantHeader.isBlank()) {
      throw new IllegalArgumentException(
          "affinity-router.tenant-header: '" + tenantHeader + "' (expected: a header name)");
    }
    if (redisUri != null && redisUri.isBlank()) {
      throw new IllegalArgumentException(
          "affinity-router.redis-uri: blank (expected: a Redis URI, or no property)");
    }
    if (scrape == null) {
      scrape = new Scrape(null, null, null, null, null);
    }
    if (engine == null) {
      engine = new Engine(null, null, null, null);
    }
    tokenizerModels = tokenizerModels == null ? Map.of() : Map.copyOf(tokenizerModels);
  }

  /**
   * Passes every router option that is set onto {@code builder}; options given in pairs to the
   * builder (ramp, Retry-After) take the builder's default for the half that is not set, and the
   * engine figures that are not set keep the default profile's.
   *
   * @return {@code builder}
   * @throws IllegalArgumentException if a value is out of range (from the builder)
   */
  public AffinityRouter.Builder applyTo(AffinityRouter.Builder builder) {
    if (engine.isSet()) {
      builder.engineProfile(engine.profile());
    }
    if (topK != null) {
      builder.topK(topK);
    }
    if (maxInFlightRequests != null) {
      builder.maxInFlightRequests(maxInFlightRequests);
    }
    if (maxInFlightTokens != null) {
      builder.maxInFlightTokens(maxInFlightTokens);
    }
    if (bindingTtl != null) {
      builder.bindingTtl(bindingTtl);
    }
    if (storeTimeout != null) {
      builder.storeTimeout(storeTimeout);
    }
    if (rampUp != null || minRampWeight != null) {
      builder.rampUp(or(rampUp, AffinityRouter.Builder.DEFAULT_RAMP_UP),
          or(minRampWeight, AffinityRouter.Builder.DEFAULT_MIN_RAMP_WEIGHT));
    }
    if (atLimitRetryAfter != null || unavailableRetryAfter != null) {
      builder.retryAfter(or(atLimitRetryAfter, AffinityRouter.Builder.DEFAULT_AT_LIMIT_RETRY_AFTER),
          or(unavailableRetryAfter, AffinityRouter.Builder.DEFAULT_UNAVAILABLE_RETRY_AFTER));
    }
    if (maxHold != null && !maxHold.isZero()) {
      builder.holdQueue(or(maxHeldRequests, AffinityRouter.Builder.DEFAULT_MAX_HELD_REQUESTS),
          AffinityRouter.Builder.DEFAULT_MAX_HELD_BYTES, maxHold);
    }
    if (textBlockChars != null) {
      builder.textBlockChars(textBlockChars);
    }
    if (maxPromptBlocks != null) {
      builder.maxPromptBlocks(maxPromptBlocks);
    }
    if (hashSeed != null) {
      builder.hashSeed(hashSeed);
    }
    if (prefixIndexEntries != null) {
      builder.prefixIndexEntries(prefixIndexEntries);
    }
    return builder;
  }

  private static <T> T or(@Nullable T value, T otherwise) {
    return value != null ? value : otherwise;
  }

  /**
   * The calibration of the engines behind the gateway, {@code affinity-router.engine.*}: each
   * figure that is set replaces the default profile's
   * ({@link AffinityRouter.Builder#DEFAULT_ENGINE_PROFILE}, Qwen2.5-7B-Instruct on one H100 under
   * vLLM V1). A fleet of another model or GPU sets its own.
   *
   * @param prefillTokensPerSecond the prefill throughput of one replica, tokens per second
   * @param attentionSeconds the quadratic attention cost of prefill, seconds per uncached token per
   *     context token (0 makes prefill linear)
   * @param batchSlowdownSequences the running sequences that double a prefill's time
   * @param runningSequenceSeconds the queue cost of each running sequence, seconds
   */
  public record Engine(
      @Nullable Double prefillTokensPerSecond,
      @Nullable Double attentionSeconds,
      @Nullable Double batchSlowdownSequences,
      @Nullable Double runningSequenceSeconds) {

    /** Whether any figure is set. */
    public boolean isSet() {
      return prefillTokensPerSecond != null || attentionSeconds != null
          || batchSlowdownSequences != null || runningSequenceSeconds != null;
    }

    /**
     * The default profile with the set figures replaced.
     *
     * @throws IllegalArgumentException if a figure is out of range (from {@link EngineProfile}),
     *     e.g. {@code "prefillTokensPerSecond: -1.0 (expected: > 0 and finite)"}
     */
    public EngineProfile profile() {
      EngineProfile p = AffinityRouter.Builder.DEFAULT_ENGINE_PROFILE;
      if (prefillTokensPerSecond != null) {
        p = p.withPrefillTokensPerSecond(prefillTokensPerSecond);
      }
      if (attentionSeconds != null) {
        p = p.withAttentionSeconds(attentionSeconds);
      }
      if (batchSlowdownSequences != null) {
        p = p.withBatchSlowdownSequences(batchSlowdownSequences);
      }
      if (runningSequenceSeconds != null) {
        p = p.withRunningSequenceSeconds(runningSequenceSeconds);
      }
      return p;
    }
  }

  /**
   * How each replica's Prometheus {@code /metrics} is scraped for its load and model states.
   *
   * @param interval time between two scrapes of one replica (default 100 ms)
   * @param timeout how long one scrape may take before it counts as failed (default 1 s)
   * @param path the metrics path on each instance (default {@code /metrics})
   * @param unhealthyAfterFailures consecutive failed scrapes (timeouts, errors) after which a
   *     replica is unhealthy and its sessions move (default 3; a refused connection counts at once)
   * @param services services whose instances are scraped from start-up, asked of the discovery
   *     client (default none: a service's instances are scraped from the first request the load
   *     balancer routes for it)
   */
  public record Scrape(
      @Nullable Duration interval,
      @Nullable Duration timeout,
      @Nullable String path,
      @Nullable Integer unhealthyAfterFailures,
      @Nullable List<String> services) {
    /** Default time between two scrapes of one replica: 100 ms. */
    public static final Duration DEFAULT_INTERVAL = Duration.ofMillis(100);
    /** Default scrape timeout: 1 s. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(1);
    /** Default metrics path: {@value}. */
    public static final String DEFAULT_PATH = "/metrics";
    /** Default consecutive failures that make a replica unhealthy: {@value}. */
    public static final int DEFAULT_UNHEALTHY_AFTER_FAILURES = 3;

    /**
     * Fills unset values with the defaults and checks them.
     *
     * @throws IllegalArgumentException if a duration is not positive, the path does not start with
     *     {@code /}, or the failure count is not positive
     */
    public Scrape {
      interval = interval != null ? interval : DEFAULT_INTERVAL;
      timeout = timeout != null ? timeout : DEFAULT_TIMEOUT;
      path = path != null ? path : DEFAULT_PATH;
      unhealthyAfterFailures = unhealthyAfterFailures != null
          ? unhealthyAfterFailures : DEFAULT_UNHEALTHY_AFTER_FAILURES;
      services = services != null ? List.copyOf(services) : List.of();
      if (interval.isNegative() || interval.isZero()) {
        throw new IllegalArgumentException(
            "affinity-router.scrape.interval: " + interval + " (expected: > 0)");
      }
      if (timeout.isNegative() || timeout.isZero()) {
        throw new IllegalArgumentException(
            "affinity-router.scrape.timeout: " + timeout + " (expected: > 0)");
      }
      if (!path.startsWith("/")) {
        throw new IllegalArgumentException(
            "affinity-router.scrape.path: '" + path + "' (expected: starting with /)");
      }
      if (unhealthyAfterFailures <= 0) {
        throw new IllegalArgumentException("affinity-router.scrape.unhealthy-after-failures: "
            + unhealthyAfterFailures + " (expected: > 0)");
      }
    }
  }
}
