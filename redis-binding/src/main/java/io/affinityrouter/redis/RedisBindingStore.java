package io.affinityrouter.redis;

import io.affinityrouter.internal.Checks;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.LoadExchange;
import io.affinityrouter.spi.SessionContext;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A {@link BindingStore} on Redis, shared by every gateway that routes the same fleet: standalone,
 * Sentinel ({@code redis-sentinel://}), Cluster, TLS ({@code rediss://}) and ACL users, through
 * Lettuce's asynchronous API. Build it with {@link #builder()}.
 *
 * <h2>Protocol</h2>
 * <ul>
 *   <li>{@link #getOrClaim} is one {@code EVALSHA}: it returns the stored binding and slides its TTL
 *       ({@code PEXPIRE}), or claims the key for the candidate. Racing gateways all get the winner.
 *   <li>With a {@link SessionContext}, the same command stores the routed turn's context in the
 *       binding's value (stamped with the server's time) and returns the one before with its age on
 *       the server's clock. Values written without one (by earlier releases too) still read.
 *       Gateways of earlier releases read values with a context as corrupt: upgrade every gateway
 *       of a fleet before any of them routes.
 *   <li>{@link #repin} is one {@code EVALSHA}: a compare-and-set on the generation that returns the
 *       stored binding either way, so a gateway with a stale view adopts the newer binding. When it
 *       writes, the script publishes an invalidation for the gateways' local caches.
 *   <li>Generations are the server's clock in microseconds, never less than the previous generation
 *       + 1: they increase across expiry as long as the Redis clock does not step back by more than
 *       the TTL.
 *   <li>Scripts are constant, called by digest, and re-sent with {@code EVAL} after {@code NOSCRIPT}
 *       (restart, failover, slot move).
 *   <li>Values not written by this store, or not parseable, or of another Redis type, are treated as
 *       absent, overwritten by the next claim and counted ({@link RedisBindingStoreStats#corruptValues}).
 * </ul>
 *
 * <h2>Local cache</h2>
 * Optional ({@link RedisBindingStoreBuilder#localCacheSize}). With it, a hot session's getOrClaim is
 * answered locally; the TTL is still slid by one asynchronous re-read per key per refresh interval,
 * and repins reach other gateways by pub/sub. See {@link RedisBindingStoreBuilder#localCacheRefresh}
 * for the bound on staleness.
 *
 * <h2>Failures</h2>
 * Clients the store creates fail fast: commands time out after the command timeout, are rejected
 * (not queued) while disconnected, and the client reconnects by itself, follows Sentinel failover
 * and Cluster topology changes. Methods never throw for store trouble: the stage completes
 * exceptionally, and the router routes degraded. They throw {@link NullPointerException} and
 * {@link IllegalArgumentException} for bad arguments only.
 *
 * <p>Thread-safe; methods never block.
 */
public final class RedisBindingStore implements BindingStore {

  private static final Pattern VALUE = Pattern.compile("ar1\\|([1-9][0-9]{0,15})\\|(.+)", Pattern.DOTALL);
  private static final Pattern VALUE_WITH_CONTEXT = Pattern.compile(
      "ar2\\|([1-9][0-9]{0,15})\\|(-?[0-9]+)\\|([0-9]+)\\|([0-9]+)\\|([0-9]+)\\|(-?[0-9]+)\\|([0-9]+)\\|(.+)",
      Pattern.DOTALL);

  private final RedisConnections connections;
  private final BindingKeyFormat keys;
  private final BindingScripts scripts;
  private final StoreCounters counters;
  private final @Nullable LocalBindingCache cache;
  private final String channel;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicInteger refreshesInFlight = new AtomicInteger();
  private volatile @Nullable RedisLoadExchange shared;

  /** Bound on the local cache's background TTL refreshes in flight at once. */
  static final int MAX_REFRESHES_IN_FLIGHT = 256;

  RedisBindingStore(RedisConnections connections, BindingKeyFormat keys, StoreCounters counters,
      @Nullable LocalBindingCache cache) {
    this.connections = connections;
    this.keys = keys;
    this.counters = counters;
    this.cache = cache;
    this.scripts = new BindingScripts(counters);
    this.channel = keys.invalidationChannel();
    scripts.preload(connections.scripting);
  }

  /**
   * A {@link io.affinityrouter.spi.LoadExchange} over this store's connection (one hash,
   * {@code <keyPrefix>load}, beside the bindings): give the same store's exchange to every gateway's
   * {@code AffinityRouter.Builder.loadExchange}. Closing the store ends it; closing the exchange
   * leaves the store open.
   */
  public RedisLoadExchange loadExchange() {
    return new RedisLoadExchange(connections.scripting, keys.loadKey(),
        RedisLoadExchange.DEFAULT_STALE_AFTER);
  }

  /** {@link #loadExchange()}, one per store, created on first use: the routers' default exchange. */
  @Override
  public Optional<LoadExchange> sharedLoadExchange() {
    RedisLoadExchange e = shared;
    if (e == null) {
      synchronized (this) {
        if (shared == null) {
          shared = loadExchange();
        }
        e = shared;
      }
    }
    return Optional.of(e);
  }

  /**
   * {@link io.affinityrouter.spi.FleetLimits} over this store's connection (one sorted set per
   * replica, {@code <keyPrefix>inflight:<replicaId>}): give the same store's limits to every
   * gateway's {@code AffinityRouter.Builder.fleetLimits} so that per-replica limits hold across
   * them. Closing the store ends it.
   */
  public RedisFleetLimits fleetLimits() {
    return new RedisFleetLimits(connections.scripting, keys.inFlightPrefix());
  }

  /**
   * A {@link io.affinityrouter.spi.LifecycleLease} over this store's connection (one hash,
   * {@code <keyPrefix>lease:<name>}, beside the bindings): give the same name to every gateway's
   * {@code ModelLifecycle.Builder.lease} so that one of them runs the model lifecycle. Closing the
   * store ends it; closing the lease leaves the store open.
   *
   * @throws IllegalArgumentException if {@code name} is blank
   */
  public RedisLifecycleLease lifecycleLease(String name) {
    Checks.notBlank(name, "name");
    return new RedisLifecycleLease(connections.scripting, keys.leaseKey(name));
  }

  /** A builder; see {@link RedisBindingStoreBuilder} for the options and their defaults. */
  public static RedisBindingStoreBuilder builder() {
    return new RedisBindingStoreBuilder();
  }

  @Override
  public CompletionStage<Binding> getOrClaim(BindingKey key, String candidateReplicaId,
      Duration ttl) {
    return lookupOrClaim(key, candidateReplicaId, ttl, null);
  }

  /**
   * {@inheritDoc} With the local cache, a hit answers without the context (null) and the context
   * reaches Redis with the entry's next background refresh.
   */
  @Override
  public CompletionStage<Binding> getOrClaim(BindingKey key, String candidateReplicaId,
      Duration ttl, SessionContext turn) {
    return lookupOrClaim(key, candidateReplicaId, ttl, Objects.requireNonNull(turn, "turn"));
  }

  private CompletionStage<Binding> lookupOrClaim(BindingKey key, String candidateReplicaId,
      Duration ttl, @Nullable SessionContext turn) {
    Objects.requireNonNull(key, "key");
    checkReplicaId("candidateReplicaId", candidateReplicaId);
    long ttlMillis = ttlMillis(ttl);
    String redisKey = keys.redisKey(key);
    LocalBindingCache local = cache;
    if (local != null && local.live()) {
      LocalBindingCache.Entry hit = local.lookup(redisKey);
      if (hit != null && hit.replicaId != null) {
        counters.cacheHits.increment();
        if (local.dueForRefresh(hit, ttlMillis) && refreshesInFlight.get() < MAX_REFRESHES_IN_FLIGHT
            && hit.refreshing.compareAndSet(false, true)) {
          // Fire and forget, bounded: a burst of due entries must not fill the command queue
          // ahead of the requests that need an answer; a skipped refresh happens on a later hit.
          counters.cacheRefreshes.increment();
          refreshesInFlight.incrementAndGet();
          claim(redisKey, hit.replicaId, ttlMillis, turn).whenComplete((b, e) -> {
            refreshesInFlight.decrementAndGet();
            hit.refreshing.set(false);
          });
        }
        return CompletableFuture.completedStage(new Binding(hit.replicaId, hit.generation, false));
      }
      counters.cacheMisses.increment();
    }
    return claim(redisKey, candidateReplicaId, ttlMillis, turn);
  }

  private CompletionStage<Binding> claim(String redisKey, String candidate, long ttlMillis,
      @Nullable SessionContext turn) {
    return guarded(() -> scripts.claim(connections.scripting, redisKey, candidate, ttlMillis,
        channel, turn))
        .thenApply(reply -> {
          (reply.written() ? counters.claims : counters.adopted).increment();
          return remember(redisKey, reply);
        });
  }

  @Override
  public CompletionStage<Binding> repin(BindingKey key, long expectedGeneration,
      String newReplicaId, Duration ttl) {
    return move(key, expectedGeneration, newReplicaId, ttl, null);
  }

  @Override
  public CompletionStage<Binding> repin(BindingKey key, long expectedGeneration,
      String newReplicaId, Duration ttl, SessionContext turn) {
    return move(key, expectedGeneration, newReplicaId, ttl, Objects.requireNonNull(turn, "turn"));
  }

  private CompletionStage<Binding> move(BindingKey key, long expectedGeneration,
      String newReplicaId, Duration ttl, @Nullable SessionContext turn) {
    Objects.requireNonNull(key, "key");
    checkReplicaId("newReplicaId", newReplicaId);
    if (expectedGeneration <= 0) {
      throw new IllegalArgumentException(
          "expectedGeneration: " + expectedGeneration + " (expected: > 0)");
    }
    long ttlMillis = ttlMillis(ttl);
    String redisKey = keys.redisKey(key);
    return guarded(() -> scripts.repin(connections.scripting, redisKey, expectedGeneration,
        newReplicaId, ttlMillis, channel, turn))
        .thenApply(reply -> {
          (reply.written() ? counters.repinsApplied : counters.repinsStale).increment();
          return remember(redisKey, reply);
        });
  }

  @Override
  public CompletionStage<Optional<Binding>> get(BindingKey key) {
    Objects.requireNonNull(key, "key");
    String redisKey = keys.redisKey(key);
    return guarded(() -> connections.strings.get(redisKey))
        .handle((value, error) -> {
          if (error != null) {
            Throwable cause = BindingScripts.unwrap(error);
            if (cause.getMessage() != null && cause.getMessage().startsWith("WRONGTYPE")) {
              counters.corruptValues.increment();
              return Optional.<Binding>empty();
            }
            throw new java.util.concurrent.CompletionException(cause);
          }
          return parse(value);
        });
  }

  private Optional<Binding> parse(@Nullable String value) {
    if (value == null) {
      return Optional.empty();
    }
    Matcher c = VALUE_WITH_CONTEXT.matcher(value);
    if (c.matches()) { // aged by this process's clock: a plain GET does not read the server's
      SessionContext context = BindingScripts.context(java.util.List.of(c.group(2), c.group(3),
          c.group(4), c.group(5), c.group(6), c.group(7)), 0, System.currentTimeMillis());
      return Optional.of(new Binding(c.group(8), Long.parseLong(c.group(1)), false, context));
    }
    Matcher m = VALUE.matcher(value);
    if (!m.matches()) {
      counters.corruptValues.increment();
      return Optional.empty();
    }
    return Optional.of(new Binding(m.group(2), Long.parseLong(m.group(1)), false));
  }

  private Binding remember(String redisKey, BindingScripts.Reply reply) {
    if (reply.corruptOverwritten()) {
      counters.corruptValues.increment();
    }
    LocalBindingCache local = cache;
    if (local != null) {
      local.store(redisKey, reply.replicaId(), reply.generation());
    }
    return new Binding(reply.replicaId(), reply.generation(), reply.written(), reply.context());
  }

  /** Runs a Lettuce call so that nothing it throws escapes: failures complete the stage. */
  private <T> CompletionStage<T> guarded(Supplier<? extends CompletionStage<T>> call) {
    if (closed.get()) {
      counters.failures.increment();
      return CompletableFuture.failedStage(new IllegalStateException("store closed"));
    }
    CompletionStage<T> stage;
    try {
      stage = call.get();
    } catch (RuntimeException e) {
      counters.failures.increment();
      return CompletableFuture.failedStage(e);
    }
    return stage.whenComplete((v, e) -> {
      if (e != null) {
        counters.failures.increment();
      }
    });
  }

  /** Counts since the store was built. */
  public RedisBindingStoreStats stats() {
    return counters.snapshot();
  }

  /**
   * Closes the connections the store opened and, if the store created the Lettuce client, the
   * client too (a client passed to the builder stays open). Idempotent; later calls fail their stage.
   */
  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      RedisLoadExchange e = shared;
      if (e != null) {
        e.close();
      }
      connections.close();
    }
  }

  private static void checkReplicaId(String name, String replicaId) {
    Objects.requireNonNull(replicaId, name);
    if (replicaId.isEmpty()) {
      throw new IllegalArgumentException(name + ": empty (expected: a replica id)");
    }
  }

  private static long ttlMillis(Duration ttl) {
    Objects.requireNonNull(ttl, "ttl");
    long millis = ttl.toMillis();
    if (millis < 1) {
      throw new IllegalArgumentException("ttl: " + ttl + " (expected: >= 1ms)");
    }
    return millis;
  }
}
