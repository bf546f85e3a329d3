package io.affinityrouter.core;

import io.affinityrouter.Router;
import io.affinityrouter.internal.Checks;
import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.FleetLimits;
import io.affinityrouter.spi.LoadExchange;
import io.affinityrouter.spi.ReplicaFilter;
import io.affinityrouter.spi.ReplicaScorer;
import io.affinityrouter.spi.RoutingListener;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;

/**
 * Builds {@link Router}s: the entry point of affinity-router's engine.
 *
 * <pre>{@code
 * Router router = AffinityRouter.builder()
 *     .bindingStore(store)        // default: an in-memory store (Caffeine)
 *     .topK(3)
 *     .build();
 * }</pre>
 *
 * <p>The options are what an operator sets: the binding store and its timeouts, block size, index
 * bound, limits, the picker's breadth and ramp, plugins, and the {@link EngineProfile} that calibrates
 * the cost model to the engines (default: Qwen2.5-7B-Instruct on one H100 under vLLM V1). The
 * routing policy's own constants are not options. Every option has a documented default; every
 * setter validates its argument and throws {@link IllegalArgumentException} with a message such as
 * {@code "topK: 0 (expected: > 0)"}.
 */
public final class AffinityRouter {
  private AffinityRouter() {}

  /** Returns a builder with every option at its default. */
  public static Builder builder() {
    return new Builder();
  }

  /** Builds a {@link Router}. Not thread-safe; {@link #build()} may be called more than once. */
  public static final class Builder {
    /** Default binding time to live (sliding): 1 hour. */
    public static final Duration DEFAULT_BINDING_TTL = Duration.ofHours(1);
    /** Default wait for the binding store before routing degraded: 50 ms. */
    public static final Duration DEFAULT_STORE_TIMEOUT = Duration.ofMillis(50);
    /** Default first back-off of the store circuit breaker: 500 ms (doubling to 10 s). */
    public static final Duration DEFAULT_STORE_BACKOFF = Duration.ofMillis(500);
    /** Default longest back-off of the store circuit breaker: 10 s. */
    public static final Duration DEFAULT_STORE_MAX_BACKOFF = Duration.ofSeconds(10);
    /** Default number of cheapest replicas the picker draws from: {@value} (AIBrix's k). */
    public static final int DEFAULT_TOP_K = 5;
    /** Default ramp for freshly ready replicas: 60 s, from weight {@value #DEFAULT_MIN_RAMP_WEIGHT}. */
    public static final Duration DEFAULT_RAMP_UP = Duration.ofSeconds(60);
    /** Default weight of a replica that just became ready: {@value}. */
    public static final double DEFAULT_MIN_RAMP_WEIGHT = 0.1;
    /** Default prefix index bound, in blocks: {@value} (about 37 MiB of heap). */
    public static final long DEFAULT_PREFIX_INDEX_ENTRIES = 1 << 20;
    /** Default engine calibration: {@link EngineProfile#QWEN2_5_7B_H100}. */
    public static final EngineProfile DEFAULT_ENGINE_PROFILE = EngineProfile.QWEN2_5_7B_H100;
    /** Default interval of {@link #loadExchange} and of the binding store's exchange: 100 ms. */
    public static final Duration DEFAULT_LOAD_EXCHANGE_INTERVAL = Duration.ofMillis(100);
    /** Default Retry-After when every replica is at its limit: 1 s. */
    public static final Duration DEFAULT_AT_LIMIT_RETRY_AFTER = Duration.ofSeconds(1);
    /** Default Retry-After when no replica serves the model now (asleep, loading, none): 5 s. */
    public static final Duration DEFAULT_UNAVAILABLE_RETRY_AFTER = Duration.ofSeconds(5);
    /** Default time a fleet-wide slot is held if its lease is never closed: 10 min. */
    public static final Duration DEFAULT_FLEET_LEASE_TIME = Duration.ofMinutes(10);
    /** Default {@link #replicaIdleTimeout}: 10 minutes. */
    public static final Duration DEFAULT_REPLICA_IDLE_TIMEOUT = Duration.ofMinutes(10);

    /** Default bound on sessions a router remembers while the store is down: {@value}. */
    public static final long DEFAULT_REMEMBERED_SESSIONS = 100_000;
    /** Default bound on held requests per router ({@link #holdQueue()}): {@value}. */
    public static final int DEFAULT_MAX_HELD_REQUESTS = 10_000;
    /** Default bound on the bytes held requests take per router (their hashes): 64 MiB. */
    public static final long DEFAULT_MAX_HELD_BYTES = 64L << 20;
    /**
     * Default longest hold before a request is refused as {@code ALL_AT_LIMIT}: 1 s. Past
     * capacity a full queue admits each request after about this long, so it is spent from the
     * request's latency budget; a client that retries after the refusal gets another turn.
     */
    public static final Duration DEFAULT_MAX_HOLD = Duration.ofSeconds(1);

    final RouterSettings settings = new RouterSettings(); // package-private: tests read it

    private Builder() {}

    /**
     * Sets the binding store, shared by every gateway that routes the same fleet. The caller owns it
     * (the router does not close it). Default: a new {@link InMemoryBindingStore} on the router's clock.
     */
    public Builder bindingStore(BindingStore store) {
      settings.store = Objects.requireNonNull(store, "store");
      settings.storeProvider = null;
      return this;
    }

    /**
     * Sets the binding store by provider name ({@code "memory"}, {@code "redis"}, ...), found with
     * {@link ServiceLoader}; the router owns the store and closes it.
     *
     * @throws IllegalArgumentException at {@link #build()} if no available provider has the name
     */
    public Builder bindingStore(String providerName, Map<String, String> properties) {
      String name = Checks.notBlank(providerName, "providerName");
      Map<String, String> copy = Map.copyOf(Objects.requireNonNull(properties, "properties"));
      settings.storeProvider = name; // set only once every argument passed its check
      settings.storeProperties = copy;
      settings.store = null;
      return this;
    }

    /** Sets the sliding time to live of session bindings (default 1 h). */
    public Builder bindingTtl(Duration ttl) {
      settings.bindingTtl = Checks.positive(ttl, "bindingTtl");
      return this;
    }

    /** Sets how long a decision waits for the binding store before routing degraded (default 50 ms). */
    public Builder storeTimeout(Duration timeout) {
      settings.storeTimeout = Checks.positive(timeout, "storeTimeout");
      return this;
    }

    /** Sets the store circuit breaker's first and longest back-off (default 500 ms and 10 s). */
    public Builder storeBackoff(Duration initial, Duration max) {
      Checks.positive(initial, "storeBackoff");
      Checks.positive(max, "storeMaxBackoff");
      if (max.compareTo(initial) < 0) {
        throw new IllegalArgumentException(
            "storeMaxBackoff: " + max + " (expected: >= storeBackoff " + initial + ")");
      }
      settings.storeBackoff = initial;
      settings.storeMaxBackoff = max;
      return this;
    }

    /** Sets the clock (default the system clock). */
    public Builder clock(InstantSource clock) {
      settings.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** Sets the picker's random source, thread-safe if shared (default {@link ThreadLocalRandom}). */
    public Builder random(RandomGenerator random) {
      settings.random = Objects.requireNonNull(random, "random");
      return this;
    }

    /** Sets tokens per block of token prompts (default 16). */
    public Builder tokenBlockSize(int tokens) {
      settings.tokenBlockSize = Checks.positive(tokens, "tokenBlockSize");
      return this;
    }

    /** Sets characters per block of text prompts (default 64). */
    public Builder textBlockChars(int chars) {
      settings.textBlockChars = Checks.positive(chars, "textBlockChars");
      return this;
    }

    /** Sets the most blocks hashed per prompt (default 8192). */
    public Builder maxPromptBlocks(int blocks) {
      settings.maxPromptBlocks = Checks.positive(blocks, "maxPromptBlocks");
      return this;
    }

    /** Sets the seed of the chained block hashes (default 0); routers sharing a fleet use one seed. */
    public Builder hashSeed(long seed) {
      settings.hashSeed = seed;
      return this;
    }

    /** Sets the prefix index bound in blocks (default {@value #DEFAULT_PREFIX_INDEX_ENTRIES}). */
    public Builder prefixIndexEntries(long entries) {
      settings.prefixIndexEntries = Checks.atLeast(entries, PrefixIndex.MIN_ENTRIES,
          "prefixIndexEntries");
      return this;
    }

    /**
     * Sets the engines' calibration (default {@link EngineProfile#QWEN2_5_7B_H100}): the figures the
     * cost model turns a replica's load and a prompt's uncached tokens into seconds with. A fleet of
     * another model or GPU gives its own.
     */
    public Builder engineProfile(EngineProfile profile) {
      settings.engineProfile = Objects.requireNonNull(profile, "engineProfile");
      return this;
    }

    /** Sets how many of the cheapest replicas the picker draws from (default {@value #DEFAULT_TOP_K}). */
    public Builder topK(int k) {
      settings.topK = Checks.positive(k, "topK");
      return this;
    }

    /** Sets the ramp of freshly ready replicas (default 60 s; zero disables it). */
    public Builder rampUp(Duration rampUp, double minWeight) {
      Checks.nonNegative(rampUp, "rampUp");
      if (!(minWeight > 0 && minWeight <= 1)) {
        throw new IllegalArgumentException("minRampWeight: " + minWeight + " (expected: > 0 and <= 1)");
      }
      settings.rampUp = rampUp;
      settings.minRampWeight = minWeight;
      return this;
    }

    /** Sets the default in-flight request limit per replica (default unlimited). */
    public Builder maxInFlightRequests(int limit) {
      settings.maxInFlightRequests = Checks.positive(limit, "maxInFlightRequests");
      return this;
    }

    /** Sets the default in-flight token limit (prompt + expected output) per replica (default unlimited). */
    public Builder maxInFlightTokens(long limit) {
      settings.maxInFlightTokens = Checks.positive(limit, "maxInFlightTokens");
      return this;
    }

    /** Sets the Retry-After hints (defaults 1 s at limit, 5 s unavailable). */
    public Builder retryAfter(Duration atLimit, Duration unavailable) {
      Checks.positive(atLimit, "atLimitRetryAfter");
      settings.unavailableRetryAfter = Checks.positive(unavailable, "unavailableRetryAfter");
      settings.atLimitRetryAfter = atLimit;
      return this;
    }

    /**
     * Holds requests back when the fleet is saturated, with the default bounds: {@value
     * #DEFAULT_MAX_HELD_REQUESTS} requests, {@link #DEFAULT_MAX_HELD_BYTES} bytes, each for at most
     * {@link #DEFAULT_MAX_HOLD}. See {@link #holdQueue(int, long, Duration)}.
     */
    public Builder holdQueue() {
      return holdQueue(DEFAULT_MAX_HELD_REQUESTS, DEFAULT_MAX_HELD_BYTES, DEFAULT_MAX_HOLD);
    }

    /**
     * Holds requests back when the fleet is saturated, up to {@code maxRequests} and
     * {@code maxBytes}, each for at most {@code maxWait}. Off by default ({@link #holdQueue()}
     * turns it on with default bounds).
     *
     * <p>New work (a request without a session, or the first turn this router sees of one) is held
     * when the cheapest replica has more than 3 s of work queued beyond what it runs, or more than
     * 0.15 s while its cache turns over faster than sessions come back (the KV its requests, other
     * gateways' included, will not hold, over the KV write rate, against the median return
     * interval) and returning turns extend their session's last prompt (the median one keeps at
     * least half of it as its prefix); a returning turn always goes to its replica, and waits in
     * the queue only while that replica is at its in-flight limit (it is never moved because the
     * fleet is busy). Held requests are admitted
     * fairly across tenants by tokens and in arrival order within a tenant, first sends ahead of
     * resends of new work ({@link io.affinityrouter.RoutingRequest#retries()}), when a lease closes or
     * sees its first token, or when {@link Router#refresh} brings new loads; new work whose own
     * cheapest replica has room is routed without waiting behind them. One still held after
     * {@code maxWait} is refused as {@code ALL_AT_LIMIT} with the at-limit Retry-After, and so is
     * one that finds the queue full. {@code selectAsync} completes on admission and holds no thread
     * meanwhile; {@code select} waits on the calling thread, and an interrupt takes its request out
     * of the queue with that refusal.
     *
     * @throws IllegalArgumentException if a bound is not positive
     */
    public Builder holdQueue(int maxRequests, long maxBytes, Duration maxWait) {
      Checks.positive(maxRequests, "maxHeldRequests");
      Checks.positive(maxBytes, "maxHeldBytes");
      settings.maxHold = Checks.positive(maxWait, "maxHold");
      settings.maxHeldRequests = maxRequests;
      settings.maxHeldBytes = maxBytes;
      return this;
    }

    /**
     * Turns holding off (the default): a request that finds every replica at its limit is refused
     * at once as {@code ALL_AT_LIMIT}, and new work is routed however busy the fleet is.
     */
    public Builder noHoldQueue() {
      settings.maxHeldRequests = 0;
      return this;
    }

    /**
     * Sets the scheduler that refuses held requests at their deadline (default: one daemon thread
     * shared by the JVM's routers). The caller owns it; refusals complete on its thread.
     */
    public Builder holdScheduler(ScheduledExecutorService scheduler) {
      settings.holdScheduler = Objects.requireNonNull(scheduler, "scheduler");
      return this;
    }

    /**
     * Sets how long a replica may go unused (not offered to {@code select} or {@code refresh}, no
     * cache events) with nothing in flight before the router forgets it: its load state, its
     * prefix-index entries and its ordinal (default 10 minutes; {@link Duration#ZERO}: only
     * {@link io.affinityrouter.Router#retire} forgets). Keeps memory and the index's replica
     * slots bounded by the live fleet under pod churn; a replica offered again starts cold.
     */
    public Builder replicaIdleTimeout(Duration timeout) {
      settings.replicaIdleTimeout = Checks.nonNegative(timeout, "replicaIdleTimeout");
      return this;
    }

    /**
     * Sets the executor of the router's maintenance: retiring idle replicas and clearing their
     * index entries, a scan of the whole index (default {@link ForkJoinPool#commonPool()}, as
     * Caffeine does; {@code Runnable::run} runs it on the routing thread that finds it due).
     */
    public Builder executor(Executor executor) {
      settings.executor = Objects.requireNonNull(executor, "executor");
      return this;
    }

    /**
     * Sets how many sessions this router remembers locally (default
     * {@value #DEFAULT_REMEMBERED_SESSIONS}): while the binding store is down, a remembered session
     * keeps the replica the store last confirmed; others fall back to rendezvous hashing.
     */
    public Builder rememberedSessions(long sessions) {
      settings.rememberedSessions = Checks.positive(sessions, "rememberedSessions");
      return this;
    }

    /**
     * Shares this router's queued prefill per replica with the other routers of the fleet through
     * {@code exchange}, at most every {@code interval}, on a decision thread that never waits for
     * it, and counts theirs in its estimates. By default the router uses its binding store's own
     * exchange ({@link BindingStore#sharedLoadExchange()}: Redis and the in-memory store have one)
     * every {@link #DEFAULT_LOAD_EXCHANGE_INTERVAL}, under a random router id; without any,
     * another gateway's queue is seen only through the engines' scraped waiting counts. The caller
     * owns the exchange.
     *
     * @param exchange the fleet's exchange, shared by every router that routes the fleet
     * @param routerId this router's id, unique among them (a host name, a pod name)
     * @param interval how often to exchange (default {@link #DEFAULT_LOAD_EXCHANGE_INTERVAL}: the
     *     scrape interval the rest of the load view lives with)
     * @throws IllegalArgumentException if {@code routerId} is blank or {@code interval} is not
     *     positive
     */
    public Builder loadExchange(LoadExchange exchange, String routerId,
        Duration interval) {
      settings.loadExchange = Objects.requireNonNull(exchange, "exchange");
      settings.storeLoadExchange = true;
      settings.routerId = Checks.notBlank(routerId, "routerId");
      settings.loadExchangeInterval = Checks.positive(interval, "loadExchangeInterval");
      return this;
    }

    /**
     * Turns the load exchange off, the binding store's own included: other gateways' queues are
     * then seen only through the engines' scraped waiting counts.
     */
    public Builder noLoadExchange() {
      settings.loadExchange = null;
      settings.routerId = null;
      settings.storeLoadExchange = false;
      return this;
    }

    /**
     * Makes the in-flight request limits ({@link #maxInFlightRequests}, or each replica's own) hold
     * across every router that shares {@code limits}, not per router (default: per router). A routed
     * decision takes a slot on its replica before it is returned and frees it when its lease
     * closes; a replica at its limit fleet-wide makes the request {@code ALL_AT_LIMIT}. A slot whose
     * lease is never closed is freed after {@code leaseTime}. When {@code limits} does not answer
     * within {@link #storeTimeout} the local limits alone apply. Every decision then completes after
     * that answer.
     */
    public Builder fleetLimits(FleetLimits limits, Duration leaseTime) {
      Objects.requireNonNull(limits, "limits");
      settings.fleetLeaseTime = Checks.positive(leaseTime, "leaseTime");
      settings.fleetLimits = limits;
      return this;
    }

    /** Adds a scorer plugin. */
    public Builder addScorer(ReplicaScorer scorer) {
      ReplicaScorer s = Objects.requireNonNull(scorer, "scorer");
      Checks.nonNegativeFinite(s.weightSeconds(), "weightSeconds of " + s.name());
      settings.scorers.add(s);
      return this;
    }

    /** Adds a filter plugin. */
    public Builder addFilter(ReplicaFilter filter) {
      settings.filters.add(Objects.requireNonNull(filter, "filter"));
      return this;
    }

    /** Adds a listener. */
    public Builder addListener(RoutingListener listener) {
      settings.listeners.add(Objects.requireNonNull(listener, "listener"));
      return this;
    }

    /**
     * Adds every {@link ReplicaScorer}, {@link ReplicaFilter} and {@link RoutingListener} listed in
     * {@code META-INF/services} on the class path ({@link ServiceLoader}).
     */
    public Builder discoverPlugins() {
      ClassLoader cl = AffinityRouter.class.getClassLoader();
      ServiceLoader.load(ReplicaScorer.class, cl).forEach(this::addScorer);
      ServiceLoader.load(ReplicaFilter.class, cl).forEach(this::addFilter);
      ServiceLoader.load(RoutingListener.class, cl).forEach(this::addListener);
      return this;
    }

    // For tests in this package only: tuning constants, set to check that each is applied.

    /** For tests: the weight of the prefill term when replicas are ranked (default 1). */
    Builder recomputeWeight(double weight) {
      if (!(weight >= 1) || Double.isInfinite(weight)) {
        throw new IllegalArgumentException("recomputeWeight: " + weight + " (expected: >= 1)");
      }
      settings.recomputeWeight = weight;
      return this;
    }

    /** For tests: the affinity budget's quantile (0 turns it off) and holder savings multiple. */
    Builder affinityBudget(double quantile, double holderSavingsMultiple) {
      if (!(quantile >= 0 && quantile < 1)) {
        throw new IllegalArgumentException(
            "affinityBudgetQuantile: " + quantile + " (expected: >= 0 and < 1)");
      }
      settings.affinityBudgetQuantile = quantile;
      settings.holderSavingsMultiple = Checks.nonNegativeFinite(holderSavingsMultiple,
          "holderSavingsMultiple");
      return this;
    }

    /**
     * With a hold queue, new work is held when even its cheapest replica has more than
     * {@code queued} of work ahead of it beyond what it runs (default 3 s). What is admitted may
     * still wait that long in the engine: keep it under the TTFT objective when the fleet is
     * compute-bound past capacity.
     *
     * @throws IllegalArgumentException if {@code queued} is negative
     */
    public Builder holdThreshold(Duration queued) {
      Checks.nonNegative(queued, "holdThreshold");
      settings.holdWaitSeconds = queued.toNanos() / 1e9;
      return this;
    }

    /** Returns a new router. */
    public Router build() {
      BindingStore store = settings.store;
      boolean owns = store == null;
      if (store == null && settings.storeProvider != null) {
        store = BindingStores.create(settings.storeProvider, settings.storeProperties);
      } else if (store == null) {
        store = InMemoryBindingStore.builder().clock(settings.clock).build();
      }
      return new DefaultRouter(settings, store, owns);
    }
  }
}
