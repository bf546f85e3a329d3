package io.affinityrouter.redis;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisConnectionStateListener;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * A gateway-local copy of recently seen bindings (Caffeine, bounded), so a hot session's turns do
 * not each cost a Redis command.
 *
 * <p><b>Staleness.</b> A repin publishes {@code "<generation> <key>"} on the invalidation channel
 * from inside its script; every store's cache marks the key as needing at least that generation, so
 * its next call goes to Redis. The cache is used only while the pub/sub connection is open, and it is
 * emptied when that connection drops and again when it is next seen open, so an invalidation missed
 * while disconnected cannot leave a stale entry behind (except for a message published in the few
 * milliseconds between the reconnect and the re-subscription, which the refresh interval bounds). Besides,
 * a cached binding older than the refresh interval triggers one asynchronous re-read (which also
 * slides the Redis TTL), and an entry not re-read for three intervals is dropped. So after a repin,
 * another gateway keeps routing the session to the previous replica for at most the pub/sub delivery
 * time, and, if the message was lost, at most one refresh interval plus one round trip.
 *
 * <p>Thread-safe; never blocks.
 */
final class LocalBindingCache {

  /** A cached binding, or a tombstone ({@code replicaId == null}) requiring a newer generation. */
  static final class Entry {
    final @Nullable String replicaId;
    final long generation;
    final long readAtNanos;
    final AtomicBoolean refreshing = new AtomicBoolean();

    Entry(@Nullable String replicaId, long generation, long readAtNanos) {
      this.replicaId = replicaId;
      this.generation = generation;
      this.readAtNanos = readAtNanos;
    }
  }

  private final Cache<String, Entry> entries;
  private final long refreshNanos;
  private final LongSupplier nanoTime;
  private final StatefulRedisPubSubConnection<String, String> pubsub;
  private final StoreCounters counters;
  private final AtomicBoolean wasDown = new AtomicBoolean(true);

  LocalBindingCache(long maximumSize, Duration refreshInterval, LongSupplier nanoTime,
      StatefulRedisPubSubConnection<String, String> pubsub, String channel,
      StoreCounters counters) {
    this.refreshNanos = refreshInterval.toNanos();
    this.nanoTime = nanoTime;
    this.pubsub = pubsub;
    this.counters = counters;
    this.entries = Caffeine.newBuilder()
        .maximumSize(maximumSize)
        .expireAfterWrite(refreshInterval.multipliedBy(3))
        .build();
    pubsub.addListener(new RedisPubSubAdapter<>() {
      @Override
      public void message(String ch, String message) {
        if (ch.equals(channel)) {
          onInvalidation(message);
        }
      }
    });
    pubsub.addListener(new RedisConnectionStateListener() {
      @Override
      public void onRedisDisconnected(RedisChannelHandler<?, ?> connection) {
        wasDown.set(true);
        entries.invalidateAll();
      }
    });
    pubsub.sync().subscribe(channel);
  }

  /** Whether the cache may answer now: the invalidation feed is connected. */
  boolean live() {
    if (!pubsub.isOpen()) {
      wasDown.set(true);
      return false;
    }
    if (wasDown.compareAndSet(true, false)) {
      entries.invalidateAll();
    }
    return true;
  }

  /** A usable cached binding for the key, or null. */
  @Nullable Entry lookup(String key) {
    Entry e = entries.getIfPresent(key);
    return e == null || e.replicaId == null ? null : e;
  }

  /** Whether the entry should be re-read now (older than the interval, or a quarter of the TTL). */
  boolean dueForRefresh(Entry e, long ttlMillis) {
    long interval = Math.min(refreshNanos, Duration.ofMillis(ttlMillis).toNanos() / 4);
    return nanoTime.getAsLong() - e.readAtNanos >= interval;
  }

  /** Records a binding read from Redis, unless the cache already knows a newer generation. */
  void store(String key, String replicaId, long generation) {
    long now = nanoTime.getAsLong();
    entries.asMap().merge(key, new Entry(replicaId, generation, now),
        (old, fresh) -> old.generation > fresh.generation ? old : fresh);
  }

  /** Applies {@code "<generation> <key>"}: entries older than that generation become tombstones. */
  void onInvalidation(String message) {
    int space = message.indexOf(' ');
    if (space <= 0) {
      return;
    }
    long generation;
    try {
      generation = Long.parseLong(message, 0, space, 10);
    } catch (NumberFormatException e) {
      return;
    }
    counters.invalidationsReceived.increment();
    String key = message.substring(space + 1);
    Entry tombstone = new Entry(null, generation, nanoTime.getAsLong());
    entries.asMap().merge(key, tombstone,
        (old, fresh) -> old.generation >= fresh.generation ? old : fresh);
  }

  long size() {
    return entries.estimatedSize();
  }
}
