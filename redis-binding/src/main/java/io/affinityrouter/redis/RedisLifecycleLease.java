package io.affinityrouter.redis;

import io.affinityrouter.internal.Checks;
import io.affinityrouter.spi.LifecycleLease;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A {@link LifecycleLease} in one Redis hash, {@code <keyPrefix>lease:<name>}, with the fields
 * {@code holder}, {@code until} (the server time in ms the holding ends at) and {@code token}. Each
 * call is one {@code EVALSHA} of a script on that single key (Cluster-safe), judged by the server's
 * clock ({@code TIME}): so the gateways' clocks do not matter, and of the gateways racing for a free
 * lease exactly one gets it.
 *
 * <p>The key never expires (it is a few bytes per lease name): the token field outlives every
 * holding, so a new holding's token is above the last one's. Tokens are the server's clock in
 * microseconds, never less than the previous token + 1, so they keep growing even when Redis loses
 * the key (a restart without persistence, a failover to a replica that missed the last acquire), as
 * long as the server clock does not step back further than the time since that acquire.
 *
 * <p>No method throws for store trouble: the stage completes exceptionally, after at most the store's
 * command timeout. A key of another type at the lease's name fails the stage too (it is not
 * overwritten). Methods throw {@link NullPointerException} and {@link IllegalArgumentException} for
 * bad arguments only. Obtain one from {@link RedisBindingStore#lifecycleLease(String)}.
 * Thread-safe (immutable).
 */
public final class RedisLifecycleLease implements LifecycleLease {

  /** Reads the time in ms and µs and the holding; the holding is live while {@code until > now}. */
  private static final String PRELUDE = String.join("\n",
      "local t = redis.call('TIME')",
      "local nowus = tonumber(t[1]) * 1000000 + tonumber(t[2])",
      "local now = math.floor(nowus / 1000)",
      "local h = redis.call('HMGET', KEYS[1], 'holder', 'token', 'until')",
      "local u = tonumber(h[3])",
      "local live = h[1] and u and u > now",
      "");

  /**
   * acquire: ARGV[1] holder, ARGV[2] ttl in ms. Renews the live holding of the same holder, or
   * starts a new one with a new token when none is live; returns its token, or 0 when another holder
   * has the lease.
   */
  static final String ACQUIRE = PRELUDE + String.join("\n",
      "if live and h[1] ~= ARGV[1] then return 0 end",
      "local token = live and tonumber(h[2])",
      "if not token then",
      "  token = nowus",
      "  local old = tonumber(h[2])",
      "  if old and old + 1 > token then token = old + 1 end",
      "end",
      "redis.call('HSET', KEYS[1], 'holder', ARGV[1], 'token', string.format('%.0f', token),",
      "  'until', string.format('%.0f', now + tonumber(ARGV[2])))",
      "return token",
      "");

  /** isCurrent: ARGV[1] holder, ARGV[2] token; 1 if that is the live holding, else 0. */
  static final String IS_CURRENT = PRELUDE + String.join("\n",
      "if live and h[1] == ARGV[1] and h[2] == ARGV[2] then return 1 end",
      "return 0",
      "");

  /**
   * release: ARGV[1] holder, ARGV[2] token; ends that holding (keeping the token field) and returns
   * 1, or returns 0 and changes nothing when the lease names another holding.
   */
  static final String RELEASE = String.join("\n",
      "local h = redis.call('HMGET', KEYS[1], 'holder', 'token')",
      "if h[1] ~= ARGV[1] or h[2] ~= ARGV[2] then return 0 end",
      "redis.call('HDEL', KEYS[1], 'holder', 'until')",
      "return 1",
      "");

  private static final String ACQUIRE_SHA = BindingScripts.sha1Hex(ACQUIRE);
  private static final String IS_CURRENT_SHA = BindingScripts.sha1Hex(IS_CURRENT);
  private static final String RELEASE_SHA = BindingScripts.sha1Hex(RELEASE);
  /** Longest ttl sent: a longer one (up to {@link Duration}'s maximum) would overflow the ms. */
  private static final Duration MAX_TTL = Duration.ofMillis(Long.MAX_VALUE);

  private final RedisScriptingAsyncCommands<String, String> scripting;
  private final String key;

  RedisLifecycleLease(RedisScriptingAsyncCommands<String, String> scripting, String key) {
    this.scripting = scripting;
    this.key = key;
  }

  /**
   * {@inheritDoc}
   *
   * @throws IllegalArgumentException if {@code holder} is blank or {@code ttl} is under 1 ms
   */
  @Override
  public CompletionStage<OptionalLong> acquire(String holder, Duration ttl) {
    Checks.notBlank(holder, "holder");
    Checks.positive(ttl, "ttl");
    if (ttl.compareTo(Duration.ofMillis(1)) < 0) {
      throw new IllegalArgumentException("ttl: " + ttl + " (expected: >= 1ms)");
    }
    long ttlMillis = ttl.compareTo(MAX_TTL) >= 0 ? Long.MAX_VALUE : ttl.toMillis();
    return call(ACQUIRE_SHA, ACQUIRE, holder, Long.toString(ttlMillis))
        .thenApply(token -> token > 0 ? OptionalLong.of(token) : OptionalLong.empty());
  }

  /**
   * {@inheritDoc} Judged by the server's clock: false once the holding's time to live ran out,
   * even before another holder took the lease.
   *
   * @throws IllegalArgumentException if {@code holder} is blank or {@code token} is not positive
   *     (this lease hands out no such token)
   */
  @Override
  public CompletionStage<Boolean> isCurrent(String holder, long token) {
    Checks.notBlank(holder, "holder");
    Checks.positive(token, "token");
    return call(IS_CURRENT_SHA, IS_CURRENT, holder, Long.toString(token))
        .thenApply(current -> current == 1L);
  }

  /**
   * {@inheritDoc} The token survives the holding, so the next holding's token is larger.
   *
   * @throws IllegalArgumentException if {@code holder} is blank or {@code token} is not positive
   */
  @Override
  public CompletionStage<Void> release(String holder, long token) {
    Checks.notBlank(holder, "holder");
    Checks.positive(token, "token");
    return call(RELEASE_SHA, RELEASE, holder, Long.toString(token)).thenApply(released -> null);
  }

  /** Does nothing: the connection is the store's, and closing the store ends the lease. */
  @Override
  public void close() {}

  @Override
  public String toString() {
    return "RedisLifecycleLease{" + key + "}";
  }

  /**
   * Runs a script by digest, sending its text after {@code NOSCRIPT} (a restart, a failover, a slot
   * move); whatever Lettuce throws (a closed connection rejects at once) completes the stage.
   */
  private CompletionStage<Long> call(String sha, String script, String... args) {
    String[] keys = {key};
    CompletionStage<Long> first;
    try {
      first = scripting.evalsha(sha, ScriptOutputType.INTEGER, keys, args);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return first.handle((reply, error) -> {
      if (error == null) {
        return CompletableFuture.completedStage(reply);
      }
      Throwable cause = BindingScripts.unwrap(error);
      if (cause instanceof RedisNoScriptException) {
        try {
          CompletionStage<Long> retry = scripting.eval(script, ScriptOutputType.INTEGER, keys, args);
          return retry;
        } catch (RuntimeException e) {
          return CompletableFuture.<Long>failedStage(e);
        }
      }
      return CompletableFuture.<Long>failedStage(cause);
    }).thenCompose(stage -> stage);
  }
}
