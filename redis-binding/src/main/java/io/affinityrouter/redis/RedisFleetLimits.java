package io.affinityrouter.redis;

import io.affinityrouter.spi.FleetLimits;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import java.time.Duration;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link FleetLimits} in Redis, beside the bindings: one sorted set per replica
 * ({@code <keyPrefix>inflight:<replicaId>}) whose members are the slots held, each scored by the
 * server time (ms) it expires at. Taking a slot is one {@code EVAL} on that key (Cluster-safe):
 * drop the expired slots, and add this one if fewer than the limit remain. Freeing it is one
 * {@code EVAL} of a {@code ZREM}, sent without waiting and tried again if the connection rejects
 * it; an acquire whose answer is lost (a command timeout after the script ran) frees its slot the
 * same way. A router that dies leaves its slots to expire. Obtain one
 * from {@link RedisBindingStore#fleetLimits()}. Thread-safe.
 */
public final class RedisFleetLimits implements FleetLimits {
  static final String ACQUIRE = String.join("\n",
      "local t = redis.call('TIME')",
      "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)",
      "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)",
      "if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end",
      "redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])",
      "redis.call('PEXPIRE', KEYS[1], ARGV[2])",
      "return 1");
  static final String RELEASE = "return redis.call('ZREM', KEYS[1], ARGV[1])";

  private final RedisScriptingAsyncCommands<String, String> scripting;
  private final String keyPrefix;
  // Slot ids: unique per instance (a random prefix) and per acquire (a counter).
  private final String idPrefix = Long.toHexString(new SplittableRandom().nextLong()) + ':';
  private final AtomicLong next = new AtomicLong();

  RedisFleetLimits(RedisScriptingAsyncCommands<String, String> scripting, String keyPrefix) {
    this.scripting = scripting;
    this.keyPrefix = keyPrefix;
  }

  @Override
  public CompletionStage<Optional<Permit>> acquire(String replicaId, int maxRequests,
      Duration leaseTime) {
    String key = keyPrefix + replicaId;
    String slot = idPrefix + next.incrementAndGet();
    CompletionStage<Long> taken;
    try {
      taken = scripting.eval(ACQUIRE, ScriptOutputType.INTEGER, new String[] {key},
          Integer.toString(maxRequests), Long.toString(leaseTime.toMillis()), slot);
    } catch (RuntimeException e) { // a closed connection rejects the command at once
      return CompletableFuture.failedFuture(e);
    }
    return taken.whenComplete((n, ex) -> {
      if (ex != null) { // timed out or lost: the script may have run, so the slot is freed
        release(key, slot, 0);
      }
    }).thenApply(n -> n == 1L ? Optional.of(permit(key, slot)) : Optional.empty());
  }

  private Permit permit(String key, String slot) {
    AtomicBoolean released = new AtomicBoolean();
    return () -> {
      if (released.compareAndSet(false, true)) {
        release(key, slot, 0);
      }
    };
  }

  /** Frees a slot; a rejected command (a full request queue, a reconnect) is tried again. */
  private void release(String key, String slot, int attempt) {
    CompletionStage<Long> sent;
    try {
      sent = scripting.eval(RELEASE, ScriptOutputType.INTEGER, new String[] {key}, slot);
    } catch (RuntimeException e) {
      sent = CompletableFuture.failedFuture(e);
    }
    sent.whenComplete((n, ex) -> {
      if (ex != null && attempt < RELEASE_ATTEMPTS) {
        CompletableFuture.delayedExecutor(10L << attempt, TimeUnit.MILLISECONDS)
            .execute(() -> release(key, slot, attempt + 1));
      }
      // after the last attempt the slot expires by itself, at its lease time
    });
  }

  /** Tries to free a slot, 10 ms, 20 ms, ... apart: {@value}. */
  static final int RELEASE_ATTEMPTS = 8;
}
