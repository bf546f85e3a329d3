package io.affinityrouter.examples.gateway.config;

import io.affinityrouter.core.AffinityRouter;
import java.time.Duration;
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
 * @param topK how many of the cheapest replicas the picker draws from (default 5)
 * @param epsilonSeconds the picker's absolute cost window in seconds (default 0.002)
 * @param epsilonFraction the picker's relative cost window (default 0.1)
 * @param prefillTokensPerSecond the cost model's prefill throughput of one replica (default 59500)
 * @param batchSlowdownSequences the cost model's running sequences that double prefill time
 *     (default 64)
 * @param runningSequenceSeconds the cost model's queue cost of each running sequence (default
 *     0.004)
 * @param affinityCachedFraction the cache share assumed on a session's bound replica when this
 *     gateway did not route its last turn (default 0.5)
 * @param repinSavingsMultiple the overload threshold's multiple of the prefill a session's cache
 *     saves (default 8)
 * @param repinSlack the overload threshold's slack (default 350 ms)
 * @param affinityBudgetQuantile the quantile of recent best prefill times within which cache wins
 *     outright (default 0.98; 0 turns the budget off)
 * @param holderSavingsMultiple the extra queue a shared prefix's holder may add within the budget,
 *     in multiples of the prefill it saves (default 4)
 * @param wakeThreshold the estimated queue at which a sleeping replica is asked to wake (default
 *     100 ms)
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
 * @param placementBlocks the leading blocks whose hash places a cold prompt (default 8)
 */
@ConfigurationProperties("affinity-router")
public record AffinityRouterProperties(
    @DefaultValue("x-session-id") String sessionHeader,
    @DefaultValue("x-tenant-id") String tenantHeader,
    @DefaultValue Scrape scrape,
    @Nullable String redisUri,
    @Nullable Integer topK,
    @Nullable Double epsilonSeconds,
    @Nullable Double epsilonFraction,
    @Nullable Double prefillTokensPerSecond,
    @Nullable Double batchSlowdownSequences,
    @Nullable Double runningSequenceSeconds,
    @Nullable Double affinityCachedFraction,
    @Nullable Double repinSavingsMultiple,
    @Nullable Duration repinSlack,
    @Nullable Double affinityBudgetQuantile,
    @Nullable Double holderSavingsMultiple,
    @Nullable Duration wakeThreshold,
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
    @Nullable Integer placementBlocks) {

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
      scrape = new Scrape(null, null, null, null);
    }
  }

  /**
   * Passes every router option that is set onto {@code builder}; options given in pairs to the
   * builder (epsilon, repin threshold, affinity budget, ramp, Retry-After) take the builder's default for the half
   * that is not set.
   *
   * @return {@code builder}
   * @throws IllegalArgumentException if a value is out of range (from the builder)
   */
  public AffinityRouter.Builder applyTo(AffinityRouter.Builder builder) {
    if (topK != null) {
      builder.topK(topK);
    }
    if (epsilonSeconds != null || epsilonFraction != null) {
      builder.epsilon(or(epsilonSeconds, AffinityRouter.Builder.DEFAULT_EPSILON_SECONDS),
          or(epsilonFraction, AffinityRouter.Builder.DEFAULT_EPSILON_FRACTION));
    }
    if (prefillTokensPerSecond != null) {
      builder.prefillTokensPerSecond(prefillTokensPerSecond);
    }
    if (batchSlowdownSequences != null) {
      builder.batchSlowdownSequences(batchSlowdownSequences);
    }
    if (runningSequenceSeconds != null) {
      builder.runningSequenceSeconds(runningSequenceSeconds);
    }
    if (wakeThreshold != null) {
      builder.wakeThreshold(wakeThreshold);
    }
    if (affinityCachedFraction != null) {
      builder.affinityCachedFraction(affinityCachedFraction);
    }
    if (repinSavingsMultiple != null || repinSlack != null) {
      builder.repinThreshold(
          or(repinSavingsMultiple, AffinityRouter.Builder.DEFAULT_REPIN_SAVINGS_MULTIPLE),
          or(repinSlack, AffinityRouter.Builder.DEFAULT_REPIN_SLACK));
    }
    if (affinityBudgetQuantile != null || holderSavingsMultiple != null) {
      builder.affinityBudget(
          or(affinityBudgetQuantile, AffinityRouter.Builder.DEFAULT_AFFINITY_BUDGET_QUANTILE),
          or(holderSavingsMultiple, AffinityRouter.Builder.DEFAULT_HOLDER_SAVINGS_MULTIPLE));
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
    if (placementBlocks != null) {
      builder.placementBlocks(placementBlocks);
    }
    return builder;
  }

  private static <T> T or(@Nullable T value, T otherwise) {
    return value != null ? value : otherwise;
  }

  /**
   * How each replica's Prometheus {@code /metrics} is scraped for its load and model states.
   *
   * @param interval time between two scrapes of one replica (default 100 ms)
   * @param timeout how long one scrape may take before it counts as failed (default 1 s)
   * @param path the metrics path on each instance (default {@code /metrics})
   * @param unhealthyAfterFailures consecutive failed scrapes (or refused connections) after which
   *     a replica is unhealthy and its sessions move (default 3)
   */
  public record Scrape(
      @Nullable Duration interval,
      @Nullable Duration timeout,
      @Nullable String path,
      @Nullable Integer unhealthyAfterFailures) {
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
