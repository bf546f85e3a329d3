package io.affinityrouter.redis;

import io.affinityrouter.internal.Checks;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Builds a {@link RedisBindingStore}. Give exactly one target: {@link #uri} (standalone,
 * {@code redis-sentinel://}, {@code rediss://}, user and password in the URI), {@link #clusterUris}
 * (Cluster seeds), or a Lettuce client the gateway already owns ({@link #client},
 * {@link #clusterClient}; the store then opens its own connections on it, never shuts it down, and
 * the client's options, e.g. timeouts, are the gateway's to set).
 *
 * <p>Not thread-safe; build on one thread. {@link #build()} connects, so it blocks for at most the
 * connect timeout per connection.
 */
public final class RedisBindingStoreBuilder {

  /** Default key prefix. */
  public static final String DEFAULT_KEY_PREFIX = "ar:b:";
  /**
   * Default command timeout in milliseconds (clients the store creates): above the router's longest
   * wait for an answer (2 s, for a session it has never heard of), so an answer the router still
   * waits for is never failed by the client first; the router bounds each call itself.
   */
  public static final long DEFAULT_COMMAND_TIMEOUT_MS = 2_500;
  /** Default connect timeout in milliseconds (clients the store creates). */
  public static final long DEFAULT_CONNECT_TIMEOUT_MS = 1_000;
  /** Default upper bound of the reconnect back-off, in milliseconds. */
  public static final long DEFAULT_RECONNECT_MAX_DELAY_MS = 1_000;
  /** Default bound on commands queued per connection; more are rejected, not queued. */
  public static final int DEFAULT_REQUEST_QUEUE_SIZE = 10_000;
  /** Default period of the Cluster topology refresh, in seconds (adaptive triggers are on too). */
  public static final long DEFAULT_TOPOLOGY_REFRESH_SECONDS = 30;
  /** Default local cache size: 0, no local cache. */
  public static final long DEFAULT_LOCAL_CACHE_SIZE = 0;
  /** Default local cache refresh interval in milliseconds. */
  public static final long DEFAULT_LOCAL_CACHE_REFRESH_MS = 2_000;

  private @Nullable RedisURI uri;
  private @Nullable List<RedisURI> clusterUris;
  private @Nullable RedisClient client;
  private @Nullable RedisClusterClient clusterClient;
  private String keyPrefix = DEFAULT_KEY_PREFIX;
  private boolean hashSessionIds = true;
  private Duration commandTimeout = Duration.ofMillis(DEFAULT_COMMAND_TIMEOUT_MS);
  private Duration connectTimeout = Duration.ofMillis(DEFAULT_CONNECT_TIMEOUT_MS);
  private Duration reconnectMaxDelay = Duration.ofMillis(DEFAULT_RECONNECT_MAX_DELAY_MS);
  private int requestQueueSize = DEFAULT_REQUEST_QUEUE_SIZE;
  private Duration topologyRefreshPeriod = Duration.ofSeconds(DEFAULT_TOPOLOGY_REFRESH_SECONDS);
  private @Nullable SslOptions sslOptions;
  private long localCacheSize = DEFAULT_LOCAL_CACHE_SIZE;
  private Duration localCacheRefresh = Duration.ofMillis(DEFAULT_LOCAL_CACHE_REFRESH_MS);

  RedisBindingStoreBuilder() {}

  /** Standalone, Sentinel ({@code redis-sentinel://…#master}) or TLS ({@code rediss://}) server. */
  public RedisBindingStoreBuilder uri(RedisURI uri) {
    this.uri = Objects.requireNonNull(uri, "uri");
    return this;
  }

  /** As {@link #uri(RedisURI)}, parsed with {@link RedisURI#create(String)}. */
  public RedisBindingStoreBuilder uri(String uri) {
    Objects.requireNonNull(uri, "uri");
    return uri(RedisURI.create(uri));
  }

  /** Cluster seed nodes (one is enough; the topology is discovered and kept up to date). */
  public RedisBindingStoreBuilder clusterUris(List<RedisURI> seeds) {
    Objects.requireNonNull(seeds, "seeds");
    if (seeds.isEmpty()) {
      throw new IllegalArgumentException("clusterUris: empty (expected: at least one seed)");
    }
    this.clusterUris = List.copyOf(seeds);
    return this;
  }

  /**
   * A client the gateway owns; connections go to {@code target}, or to the client's default URI
   * when {@code target} is null. The store never shuts the client down.
   */
  public RedisBindingStoreBuilder client(RedisClient client, @Nullable RedisURI target) {
    this.client = Objects.requireNonNull(client, "client");
    this.uri = target;
    return this;
  }

  /** A Cluster client the gateway owns. The store never shuts it down. */
  public RedisBindingStoreBuilder clusterClient(RedisClusterClient clusterClient) {
    this.clusterClient = Objects.requireNonNull(clusterClient, "clusterClient");
    return this;
  }

  /**
   * TLS settings (trust store, client certificate) for clients the store creates, used with
   * {@code rediss://} URIs; default: Lettuce's, i.e. the JDK trust store.
   */
  public RedisBindingStoreBuilder sslOptions(SslOptions sslOptions) {
    this.sslOptions = Objects.requireNonNull(sslOptions, "sslOptions");
    return this;
  }

  /** Prefix of every key and of the invalidation channel; default {@value #DEFAULT_KEY_PREFIX}. */
  public RedisBindingStoreBuilder keyPrefix(String keyPrefix) {
    Objects.requireNonNull(keyPrefix, "keyPrefix");
    if (keyPrefix.isEmpty()) {
      throw new IllegalArgumentException("keyPrefix: empty (expected: a non-empty prefix)");
    }
    this.keyPrefix = keyPrefix;
    return this;
  }

  /** Whether keys hold the SHA-256 of the session id instead of the id; default true. */
  public RedisBindingStoreBuilder hashSessionIds(boolean hashSessionIds) {
    this.hashSessionIds = hashSessionIds;
    return this;
  }

  /** Per-command timeout; default {@value #DEFAULT_COMMAND_TIMEOUT_MS} ms. */
  public RedisBindingStoreBuilder commandTimeout(Duration timeout) {
    this.commandTimeout = Checks.positive(timeout, "commandTimeout");
    return this;
  }

  /** Connect timeout; default {@value #DEFAULT_CONNECT_TIMEOUT_MS} ms. */
  public RedisBindingStoreBuilder connectTimeout(Duration timeout) {
    this.connectTimeout = Checks.positive(timeout, "connectTimeout");
    return this;
  }

  /** Upper bound of the reconnect back-off; default {@value #DEFAULT_RECONNECT_MAX_DELAY_MS} ms. */
  public RedisBindingStoreBuilder reconnectMaxDelay(Duration delay) {
    this.reconnectMaxDelay = Checks.positive(delay, "reconnectMaxDelay");
    return this;
  }

  /** Commands queued per connection before new ones are rejected; default {@value #DEFAULT_REQUEST_QUEUE_SIZE}. */
  public RedisBindingStoreBuilder requestQueueSize(int size) {
    this.requestQueueSize = Checks.positive(size, "requestQueueSize");
    return this;
  }

  /** Periodic Cluster topology refresh; default {@value #DEFAULT_TOPOLOGY_REFRESH_SECONDS} s. */
  public RedisBindingStoreBuilder topologyRefreshPeriod(Duration period) {
    this.topologyRefreshPeriod = Checks.positive(period, "topologyRefreshPeriod");
    return this;
  }

  /**
   * Maximum number of bindings kept in the local cache; 0 (the default) disables it. With a cache
   * the store opens a pub/sub connection for invalidations.
   */
  public RedisBindingStoreBuilder localCacheSize(long size) {
    this.localCacheSize = Checks.nonNegative(size, "localCacheSize");
    return this;
  }

  /**
   * How often a cached binding is re-read from Redis (which also slides its TTL), at most once per
   * interval per key and never less often than every quarter TTL; default
   * {@value #DEFAULT_LOCAL_CACHE_REFRESH_MS} ms. This is the bound on how long a gateway can route
   * to the previous replica after another gateway's repin when the pub/sub invalidation is lost
   * (normally it arrives within milliseconds); entries not re-read for three intervals are dropped.
   */
  public RedisBindingStoreBuilder localCacheRefresh(Duration interval) {
    this.localCacheRefresh = Checks.positive(interval, "localCacheRefresh");
    return this;
  }

  /**
   * Connects and returns the store.
   *
   * @throws IllegalStateException if no target, or more than one, was given
   * @throws io.lettuce.core.RedisConnectionException if Redis cannot be reached now
   */
  public RedisBindingStore build() {
    int targets = (clusterUris != null ? 1 : 0) + (client != null ? 1 : 0)
        + (clusterClient != null ? 1 : 0) + (uri != null && client == null ? 1 : 0);
    if (targets != 1) {
      throw new IllegalStateException("targets: " + targets
          + " (expected: exactly one of uri, clusterUris, client, clusterClient)");
    }
    boolean withCache = localCacheSize > 0;
    RedisConnections.Settings settings = new RedisConnections.Settings(commandTimeout,
        connectTimeout, reconnectMaxDelay, requestQueueSize, topologyRefreshPeriod, sslOptions);
    RedisConnections connections;
    if (clusterUris != null) {
      connections = RedisConnections.ownCluster(clusterUris, settings, withCache);
    } else if (clusterClient != null) {
      connections = RedisConnections.sharedCluster(clusterClient, withCache);
    } else if (client != null) {
      connections = RedisConnections.sharedStandalone(client, uri, withCache);
    } else {
      connections = RedisConnections.ownStandalone(Objects.requireNonNull(uri), settings, withCache);
    }
    try {
      BindingKeyFormat keys = new BindingKeyFormat(keyPrefix, hashSessionIds);
      StoreCounters counters = new StoreCounters();
      LocalBindingCache cache = null;
      if (withCache) {
        cache = new LocalBindingCache(localCacheSize, localCacheRefresh, System::nanoTime,
            Objects.requireNonNull(connections.pubsub), keys.invalidationChannel(), counters);
      }
      return new RedisBindingStore(connections, keys, counters, cache);
    } catch (RuntimeException e) {
      connections.close();
      throw e;
    }
  }
}
