package io.affinityrouter.redis;

import io.affinityrouter.spi.SessionContext;
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
import org.jspecify.annotations.Nullable;

/**
 * The two server-side scripts of the binding protocol and how they are called: by digest
 * ({@code EVALSHA}), falling back to {@code EVAL} of the same constant text when the server answers
 * {@code NOSCRIPT} (after a restart, a failover or a Cluster slot move); {@code EVAL} also caches the
 * script on that server, so the next call is an {@code EVALSHA} again.
 *
 * <p>Each script touches exactly one key ({@code KEYS[1]}), so it is Cluster-safe. Stored values are
 * {@code ar2|<generation>|<writer>|<prompt>|<output>|<anchorBlocks>|<anchorHash>|<atMillis>|<replicaId>}
 * (a binding with its session context, {@code atMillis} on the server's clock) or, as earlier
 * releases wrote them and calls without a context leave them, {@code ar1|<generation>|<replicaId>};
 * anything else at the key (another format, another type) is treated as absent, overwritten, and
 * reported in the reply. Generations come from the server's clock in microseconds ({@code TIME}),
 * never less than the stored generation + 1, so they keep increasing across expiry as long as the
 * server clock does not step back by more than the TTL.
 *
 * <p>Reply of both scripts: {@code {replicaId, generation, written (0|1), corruptOverwritten (0|1)}},
 * followed, when the binding held a context another writer stored, by {@code {writer, prompt,
 * output, anchorBlocks, anchorHash, ageMillis}} (numbers as decimal strings). Thread-safe
 * (immutable).
 */
final class BindingScripts {

  /**
   * Shared helpers: read and parse the key (generation, replica, corrupt flag, context fields); a
   * new generation and the time in ms from TIME; the value to store.
   */
  private static final String PRELUDE = String.join("\n",
      "local function current(k)",
      "  local v = redis.pcall('GET', k)",
      "  if type(v) == 'string' then",
      "    local g, w, p, o, b, h, at, r = string.match(v,",
      "      '^ar2|([1-9]%d*)|(%-?%d+)|(%d+)|(%d+)|(%d+)|(%-?%d+)|(%d+)|(.+)$')",
      "    if g and string.len(g) <= 16 then return g, r, 0, {w, p, o, b, h, at} end",
      "    g, r = string.match(v, '^ar1|([1-9]%d*)|(.+)$')",
      "    if g and string.len(g) <= 16 then return g, r, 0, nil end",
      "    return nil, nil, 1, nil",
      "  elseif type(v) == 'table' and v.err then",
      "    return nil, nil, 1, nil",
      "  end",
      "  return nil, nil, 0, nil",
      "end",
      "local t = redis.call('TIME')",
      "local nowus = tonumber(t[1]) * 1000000 + tonumber(t[2])",
      "local nowms = string.format('%.0f', math.floor(nowus / 1000))",
      "local function nextgen(old)",
      "  local now = nowus",
      "  if old and tonumber(old) + 1 > now then now = tonumber(old) + 1 end",
      "  return string.format('%.0f', now)",
      "end",
      "local function value(gen, replica, c)",
      "  if c[1] == '' then return 'ar1|' .. gen .. '|' .. replica end",
      "  return 'ar2|' .. gen .. '|' .. c[1] .. '|' .. c[2] .. '|' .. c[3] .. '|' .. c[4] .. '|'",
      "    .. c[5] .. '|' .. nowms .. '|' .. replica",
      "end",
      "local function reply(replica, gen, written, corrupt, old, writer)",
      "  if old == nil or old[1] == writer then return {replica, gen, written, corrupt} end",
      "  local age = tonumber(nowms) - tonumber(old[6])",
      "  if age < 0 then age = 0 end",
      "  return {replica, gen, written, corrupt, old[1], old[2], old[3], old[4], old[5],",
      "    string.format('%.0f', age)}",
      "end",
      "");

  /**
   * getOrClaim: KEYS[1] key; ARGV[1] candidate replica, ARGV[2] ttl in ms, ARGV[3] invalidation
   * channel ("" for none), ARGV[4..8] the turn's writer, prompt, output, anchor blocks and anchor
   * hash (ARGV[4] "" for none: the stored context stays). Returns the stored binding, refreshing
   * its TTL and replacing its context, or claims the key.
   */
  static final String CLAIM = PRELUDE + String.join("\n",
      "local c = {ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]}",
      "local g, r, corrupt, old = current(KEYS[1])",
      "if g then",
      "  if c[1] == '' then",
      "    redis.call('PEXPIRE', KEYS[1], ARGV[2])",
      "  else",
      "    redis.call('SET', KEYS[1], value(g, r, c), 'PX', ARGV[2])",
      "  end",
      "  return reply(r, g, 0, 0, old, ARGV[4])",
      "end",
      "local gen = nextgen(nil)",
      "redis.call('SET', KEYS[1], value(gen, ARGV[1], c), 'PX', ARGV[2])",
      "if corrupt == 1 and ARGV[3] ~= '' then redis.call('PUBLISH', ARGV[3], gen .. ' ' .. KEYS[1]) end",
      "return {ARGV[1], gen, 1, corrupt}",
      "");

  /**
   * repin: KEYS[1] key; ARGV[1] expected generation, ARGV[2] new replica, ARGV[3] ttl in ms,
   * ARGV[4] invalidation channel ("" for none), ARGV[5..9] the turn's context as for CLAIM.
   * Compare-and-set on the generation; publishes "generation key" on the channel when it writes.
   */
  static final String REPIN = PRELUDE + String.join("\n",
      "local c = {ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]}",
      "local g, r, corrupt, old = current(KEYS[1])",
      "if g and g ~= ARGV[1] then return reply(r, g, 0, 0, old, ARGV[5]) end",
      "local gen = nextgen(g)",
      "redis.call('SET', KEYS[1], value(gen, ARGV[2], c), 'PX', ARGV[3])",
      "if ARGV[4] ~= '' then redis.call('PUBLISH', ARGV[4], gen .. ' ' .. KEYS[1]) end",
      "return {ARGV[2], gen, 1, corrupt}",
      "");

  /** The decoded reply of a script. */
  record Reply(String replicaId, long generation, boolean written, boolean corruptOverwritten,
      @Nullable SessionContext context) {}

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
      String candidate, long ttlMillis, String channel, @Nullable SessionContext turn) {
    return call(commands, claimSha, CLAIM, key, candidate, Long.toString(ttlMillis), channel,
        turn == null ? "" : Long.toString(turn.writer()),
        turn == null ? "" : Integer.toString(turn.promptTokens()),
        turn == null ? "" : Integer.toString(turn.outputTokens()),
        turn == null ? "" : Integer.toString(turn.anchorBlocks()),
        turn == null ? "" : Long.toString(turn.anchorHash()));
  }

  CompletionStage<Reply> repin(RedisScriptingAsyncCommands<String, String> commands, String key,
      long expectedGeneration, String newReplica, long ttlMillis, String channel,
      @Nullable SessionContext turn) {
    return call(commands, repinSha, REPIN, key, Long.toString(expectedGeneration), newReplica,
        Long.toString(ttlMillis), channel,
        turn == null ? "" : Long.toString(turn.writer()),
        turn == null ? "" : Integer.toString(turn.promptTokens()),
        turn == null ? "" : Integer.toString(turn.outputTokens()),
        turn == null ? "" : Integer.toString(turn.anchorBlocks()),
        turn == null ? "" : Long.toString(turn.anchorHash()));
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
    if (reply.size() != 4 && reply.size() != 10) {
      throw new IllegalStateException("binding script reply: " + reply.size()
          + " elements (expected: 4 or 10)");
    }
    String replica = (String) reply.get(0);
    long generation = Long.parseLong((String) reply.get(1));
    boolean written = ((Long) reply.get(2)) == 1L;
    boolean corrupt = ((Long) reply.get(3)) == 1L;
    return new Reply(replica, generation, written, corrupt,
        reply.size() == 10 ? context(reply, 4, -1) : null);
  }

  /**
   * The context in {@code fields} from {@code from}: writer, prompt, output, anchor blocks, anchor
   * hash, then the age in ms (or, with {@code nowMillis >= 0}, the time written); null if a field
   * does not parse or is out of range (a value some other writer left).
   */
  static @Nullable SessionContext context(List<?> fields, int from, long nowMillis) {
    try {
      long writer = Long.parseLong((String) fields.get(from));
      int prompt = Integer.parseInt((String) fields.get(from + 1));
      int output = Integer.parseInt((String) fields.get(from + 2));
      int blocks = Integer.parseInt((String) fields.get(from + 3));
      long hash = Long.parseLong((String) fields.get(from + 4));
      long time = Long.parseLong((String) fields.get(from + 5));
      long age = nowMillis >= 0 ? Math.max(0, nowMillis - time) : Math.max(0, time);
      return new SessionContext(writer, prompt, output, blocks, hash, age);
    } catch (RuntimeException e) { // NumberFormatException, IllegalArgumentException, ClassCast
      return null;
    }
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
