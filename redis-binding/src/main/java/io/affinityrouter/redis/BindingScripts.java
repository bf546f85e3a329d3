package io.affinityrouter.redis;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * The two server-side scripts of the binding protocol and how they are called: by digest
 * ({@code EVALSHA}), falling back to {@code EVAL} of the same constant text when the server answers
 * {@code NOSCRIPT} (after a restart, a failover or a Cluster slot move); {@code EVAL} also caches the
 * script on that server, so the next call is an {@code EVALSHA} again.
 *
 * <p>Each script touches exactly one key ({@code KEYS[1]}), so it is Cluster-safe. Stored values are
 * {@code ar1|<generation>|<replicaId>}; anything else at the key (another format, another type) is
 * treated as absent, overwritten, and reported in the reply. Generations come from the server's
 * clock in microseconds ({@code TIME}), never less than the stored generation + 1, so they keep
 * increasing across expiry as long as the server clock does not step back by more than the TTL.
 *
 * <p>Reply of both scripts: {@code {replicaId, generation, written (0|1), corruptOverwritten (0|1)}}.
 * Thread-safe (immutable).
 */
final class BindingScripts {

  /** Shared helpers: read and parse the key; a new generation from TIME. */
  private static final String PRELUDE = String.join("\n",
      "local function current(k)",
      "  local v = redis.pcall('GET', k)",
      "  if type(v) == 'string' then",
      "    local g, r = string.match(v, '^ar1|([1-9]%d*)|(.+)$')",
      "    if g and string.len(g) <= 16 then return g, r, 0 end",
      "    return nil, nil, 1",
      "  elseif type(v) == 'table' and v.err then",
      "    return nil, nil, 1",
      "  end",
      "  return nil, nil, 0",
      "end",
      "local function nextgen(old)",
      "  local t = redis.call('TIME')",
      "  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])",
      "  if old and tonumber(old) + 1 > now then now = tonumber(old) + 1 end",
      "  return string.format('%.0f', now)",
      "end",
      "");

  /**
   * getOrClaim: KEYS[1] key; ARGV[1] candidate replica, ARGV[2] ttl in ms, ARGV[3] invalidation
   * channel ("" for none). Returns the stored binding (refreshing its TTL) or claims the key.
   */
  static final String CLAIM = PRELUDE + String.join("\n",
      "local g, r, corrupt = current(KEYS[1])",
      "if g then",
      "  redis.call('PEXPIRE', KEYS[1], ARGV[2])",
      "  return {r, g, 0, 0}",
      "end",
      "local gen = nextgen(nil)",
      "redis.call('SET', KEYS[1], 'ar1|' .. gen .. '|' .. ARGV[1], 'PX', ARGV[2])",
      "if corrupt == 1 and ARGV[3] ~= '' then redis.call('PUBLISH', ARGV[3], gen .. ' ' .. KEYS[1]) end",
      "return {ARGV[1], gen, 1, corrupt}",
      "");

  /**
   * repin: KEYS[1] key; ARGV[1] expected generation, ARGV[2] new replica, ARGV[3] ttl in ms,
   * ARGV[4] invalidation channel ("" for none). Compare-and-set on the generation; publishes
   * "generation key" on the channel when it writes.
   */
  static final String REPIN = PRELUDE + String.join("\n",
      "local g, r, corrupt = current(KEYS[1])",
      "if g and g ~= ARGV[1] then return {r, g, 0, 0} end",
      "local gen = nextgen(g)",
      "redis.call('SET', KEYS[1], 'ar1|' .. gen .. '|' .. ARGV[2], 'PX', ARGV[3])",
      "if ARGV[4] ~= '' then redis.call('PUBLISH', ARGV[4], gen .. ' ' .. KEYS[1]) end",
      "return {ARGV[2], gen, 1, corrupt}",
      "");

  /** The decoded reply of a script. */
  record Reply(String replicaId, long generation, boolean written, boolean corruptOverwritten) {}

  private final String claimSha = sha1Hex(CLAIM);
  private final String repinSha = sha1Hex(REPIN);
  private final StoreCounters counters;

  BindingScripts(StoreCounters counters) {
    this.counters = counters;
  }

  /** Loads both scripts (best effort: a failure is repaired by the NOSCRIPT fallback). */
  void preload(RedisScriptingAsyncCommands<String, String> commands) {
    try {
      commands.scriptLoad(CLAIM);
      commands.scriptLoad(REPIN);
    } catch (RuntimeException e) {
      // Rejected while disconnected: the first call will EVAL instead.
    }
  }

  CompletionStage<Reply> claim(RedisScriptingAsyncCommands<String, String> commands, String key,
      String candidate, long ttlMillis, String channel) {
    return call(commands, claimSha, CLAIM, key, candidate, Long.toString(ttlMillis), channel);
  }

  CompletionStage<Reply> repin(RedisScriptingAsyncCommands<String, String> commands, String key,
      long expectedGeneration, String newReplica, long ttlMillis, String channel) {
    return call(commands, repinSha, REPIN, key, Long.toString(expectedGeneration), newReplica,
        Long.toString(ttlMillis), channel);
  }

  private CompletionStage<Reply> call(RedisScriptingAsyncCommands<String, String> commands,
      String sha, String script, String key, String... args) {
    String[] keys = {key};
    CompletionStage<List<Object>> first = commands.evalsha(sha, ScriptOutputType.MULTI, keys, args);
    return first.handle((reply, error) -> {
      if (error == null) {
        return CompletableFuture.completedStage(reply);
      }
      if (unwrap(error) instanceof RedisNoScriptException) {
        counters.scriptReloads.increment();
        CompletionStage<List<Object>> retry = commands.eval(script, ScriptOutputType.MULTI, keys, args);
        return retry;
      }
      return CompletableFuture.<List<Object>>failedStage(unwrap(error));
    }).thenCompose(stage -> stage).thenApply(BindingScripts::decode);
  }

  private static Reply decode(List<Object> reply) {
    if (reply.size() != 4) {
      throw new IllegalStateException("binding script reply: " + reply.size() + " elements (expected: 4)");
    }
    String replica = (String) reply.get(0);
    long generation = Long.parseLong((String) reply.get(1));
    boolean written = ((Long) reply.get(2)) == 1L;
    boolean corrupt = ((Long) reply.get(3)) == 1L;
    return new Reply(replica, generation, written, corrupt);
  }

  static Throwable unwrap(Throwable error) {
    Throwable t = error;
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  static String sha1Hex(String script) {
    try {
      MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
      return HexFormat.of().formatHex(sha1.digest(script.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-1 is required by every Java platform", e);
    }
  }
}
