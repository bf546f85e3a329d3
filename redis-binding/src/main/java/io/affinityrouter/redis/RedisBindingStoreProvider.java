package io.affinityrouter.redis;

import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.BindingStoreProvider;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The {@code "redis"} {@link BindingStoreProvider} (priority 5), registered for
 * {@link java.util.ServiceLoader}. Properties (all optional except a target):
 * <ul>
 *   <li>{@code uri}: a Lettuce URI: {@code redis://[user:password@]host:port},
 *       {@code rediss://…} (TLS), {@code redis-sentinel://host:port[,host:port]#master};
 *   <li>{@code cluster-uris}: comma-separated Cluster seed URIs (instead of {@code uri});
 *   <li>{@code tls-ca-file}: a PEM file of trusted certificates for {@code rediss://} (default: the
 *       JDK trust store);
 *   <li>{@code key-prefix}: default {@value RedisBindingStoreBuilder#DEFAULT_KEY_PREFIX};
 *   <li>{@code hash-session-ids}: {@code true} (default) or {@code false};
 *   <li>{@code timeout-ms}: command timeout, default
 *       {@value RedisBindingStoreBuilder#DEFAULT_COMMAND_TIMEOUT_MS};
 *   <li>{@code connect-timeout-ms}: default {@value RedisBindingStoreBuilder#DEFAULT_CONNECT_TIMEOUT_MS};
 *   <li>{@code reconnect-max-delay-ms}: default
 *       {@value RedisBindingStoreBuilder#DEFAULT_RECONNECT_MAX_DELAY_MS};
 *   <li>{@code request-queue-size}: default {@value RedisBindingStoreBuilder#DEFAULT_REQUEST_QUEUE_SIZE};
 *   <li>{@code local-cache-size}: default 0 (no local cache);
 *   <li>{@code local-cache-refresh-ms}: default
 *       {@value RedisBindingStoreBuilder#DEFAULT_LOCAL_CACHE_REFRESH_MS}.
 * </ul>
 * Stateless and thread-safe.
 */
public final class RedisBindingStoreProvider implements BindingStoreProvider {

  private static final Set<String> KNOWN = Set.of("uri", "cluster-uris", "key-prefix",
      "hash-session-ids", "tls-ca-file", "timeout-ms", "connect-timeout-ms", "reconnect-max-delay-ms",
      "request-queue-size", "local-cache-size", "local-cache-refresh-ms");

  /** For {@link java.util.ServiceLoader}. */
  public RedisBindingStoreProvider() {}

  @Override
  public String name() {
    return "redis";
  }

  @Override
  public int priority() {
    return 5;
  }

  /** True when Lettuce and Caffeine are on the class path. */
  @Override
  public boolean isAvailable() {
    try {
      ClassLoader loader = RedisBindingStoreProvider.class.getClassLoader();
      Class.forName("io.lettuce.core.RedisClient", false, loader);
      Class.forName("com.github.benmanes.caffeine.cache.Caffeine", false, loader);
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /**
   * Creates a store from the properties above.
   *
   * @throws IllegalArgumentException for an unknown, missing or invalid property
   * @throws io.lettuce.core.RedisConnectionException if Redis cannot be reached now
   */
  @Override
  public BindingStore create(Map<String, String> properties) {
    for (String name : properties.keySet()) {
      if (!KNOWN.contains(name)) {
        throw new IllegalArgumentException("property: " + name + " (expected: one of "
            + new java.util.TreeSet<>(KNOWN) + ")");
      }
    }
    RedisBindingStoreBuilder b = RedisBindingStore.builder();
    String uri = properties.get("uri");
    String seeds = properties.get("cluster-uris");
    if ((uri == null) == (seeds == null)) {
      throw new IllegalArgumentException("uri/cluster-uris: " + (uri == null ? "neither" : "both")
          + " (expected: exactly one)");
    }
    try {
      if (uri != null) {
        b.uri(RedisURI.create(uri));
      } else {
        List<RedisURI> list = new ArrayList<>();
        for (String s : seeds.split(",")) {
          if (!s.isBlank()) {
            list.add(RedisURI.create(s.strip()));
          }
        }
        b.clusterUris(list);
      }
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("uri: " + e.getMessage() + " (expected: a Redis URI)", e);
    }
    String ca = properties.get("tls-ca-file");
    if (ca != null) {
      java.io.File file = new java.io.File(ca);
      if (!file.canRead()) {
        throw new IllegalArgumentException("tls-ca-file: " + ca + " (expected: a readable PEM file)");
      }
      b.sslOptions(io.lettuce.core.SslOptions.builder().jdkSslProvider().trustManager(file).build());
    }
    String prefix = properties.get("key-prefix");
    if (prefix != null) {
      b.keyPrefix(prefix);
    }
    String hash = properties.get("hash-session-ids");
    if (hash != null) {
      if (!hash.equals("true") && !hash.equals("false")) {
        throw new IllegalArgumentException("hash-session-ids: " + hash + " (expected: true or false)");
      }
      b.hashSessionIds(Boolean.parseBoolean(hash));
    }
    Long v;
    if ((v = number(properties, "timeout-ms")) != null) {
      b.commandTimeout(Duration.ofMillis(v));
    }
    if ((v = number(properties, "connect-timeout-ms")) != null) {
      b.connectTimeout(Duration.ofMillis(v));
    }
    if ((v = number(properties, "reconnect-max-delay-ms")) != null) {
      b.reconnectMaxDelay(Duration.ofMillis(v));
    }
    if ((v = number(properties, "request-queue-size")) != null) {
      b.requestQueueSize((int) Math.min(Integer.MAX_VALUE, v));
    }
    if ((v = number(properties, "local-cache-size")) != null) {
      b.localCacheSize(v);
    }
    if ((v = number(properties, "local-cache-refresh-ms")) != null) {
      b.localCacheRefresh(Duration.ofMillis(v));
    }
    return b.build();
  }

  private static @Nullable Long number(Map<String, String> properties, String name) {
    String text = properties.get(name);
    if (text == null) {
      return null;
    }
    try {
      return Long.parseLong(text.strip());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + ": " + text + " (expected: an integer)", e);
    }
  }
}
