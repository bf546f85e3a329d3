package io.affinityrouter.redis;

import io.affinityrouter.internal.LoadExchanges;
import io.affinityrouter.spi.LoadExchange;
import io.affinityrouter.spi.LoadExchange.Share;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A {@link LoadExchange} in one Redis hash: each router's publication is a field (its id) whose
 * value is {@code ar1|<publishedAtMillis>} followed by one {@code \n<replicaId>\t<seconds>} line per
 * replica with queued prefill and one {@code \n\u0001<replicaId>\t<turnsPerSecond>} line per
 * replica with session turns (a reader that knows only the first kind takes the second for a
 * replica no fleet has, so routers of both versions share one hash). One exchange is one {@code EVAL} of a script on that single key (Cluster-safe): write the
 * router's field, drop fields older than the staleness limit, refresh the key's expiry, return the
 * hash. The call does not wait for the reply: the reply replaces the view the next calls return, so a
 * router sees the others as of its previous exchange (one interval, plus one round trip, old), each
 * publication drained by its age. When Redis does not answer, the last view goes on draining and
 * {@link #failures()} counts the misses; nothing is thrown. Replica ids containing a tab or a line
 * break, or starting with {@code \u0001}, are left out of publications. Obtain one from {@link RedisBindingStore#loadExchange()}.
 * Thread-safe.
 */
public final class RedisLoadExchange implements LoadExchange {
  /** Publications older than this are ignored and removed: 10 s. */
  public static final Duration DEFAULT_STALE_AFTER = Duration.ofSeconds(10);

  static final String SCRIPT = String.join("\n",
      "redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])",
      "local all = redis.call('HGETALL', KEYS[1])",
      "local oldest = tonumber(ARGV[3]) - tonumber(ARGV[4])",
      "local out = {}",
      "for i = 1, #all, 2 do",
      "  local at = tonumber(string.match(all[i + 1], '^ar1|(%d+)'))",
      "  if at == nil or at < oldest then",
      "    redis.call('HDEL', KEYS[1], all[i])",
      "  else",
      "    out[#out + 1] = all[i]",
      "    out[#out + 1] = all[i + 1]",
      "  end",
      "end",
      "redis.call('PEXPIRE', KEYS[1], ARGV[4])",
      "return out");

  /** Marks a line of session turns. */
  static final char TURNS = '\u0001';

  /** One router's publication as read back. */
  record Publication(String routerId, long atMillis, Map<String, Share> shares) {}

  private final RedisScriptingAsyncCommands<String, String> scripting;
  private final String key;
  private final long staleAfterMillis;
  private final AtomicLong sent = new AtomicLong();
  private final AtomicLong applied = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile List<Publication> view = List.of();

  RedisLoadExchange(RedisScriptingAsyncCommands<String, String> scripting, String key,
      Duration staleAfter) {
    this.scripting = scripting;
    this.key = key;
    this.staleAfterMillis = staleAfter.toMillis();
  }

  @Override
  public Map<String, Double> exchange(String routerId, Map<String, Double> queuedSeconds,
      long nowMillis) {
    LoadExchanges.checkArguments(routerId, queuedSeconds);
    return LoadExchanges.queued(share(routerId, LoadExchanges.shares(queuedSeconds), nowMillis));
  }

  @Override
  public Map<String, Share> share(String routerId, Map<String, Share> mine, long nowMillis) {
    LoadExchanges.checkShares(routerId, mine);
    String value = encode(mine, nowMillis);
    if (!closed.get()) {
      long seq = sent.incrementAndGet();
      try {
        scripting.<List<Object>>eval(SCRIPT, ScriptOutputType.MULTI, new String[] {key}, routerId,
            value, Long.toString(nowMillis), Long.toString(staleAfterMillis))
            .whenComplete((reply, error) -> {
              if (error != null || reply == null) {
                failures.incrementAndGet();
              } else {
                apply(seq, decodeAll(reply));
              }
            });
      } catch (RuntimeException e) { // a closed connection rejects the command at once
        failures.incrementAndGet();
      }
    }
    return others(view, routerId, nowMillis, staleAfterMillis);
  }

  /** Installs a reply unless a later one was installed already. */
  private void apply(long seq, List<Publication> publications) {
    long last;
    do {
      last = applied.get();
      if (seq < last) {
        return;
      }
    } while (!applied.compareAndSet(last, seq));
    view = publications;
  }

  /** Exchanges whose reply did not arrive (Redis down, timed out, or the reply was not a hash). */
  public long failures() {
    return failures.get();
  }

  /** The others' publications in {@code view}, summed per replica, each drained by its age. */
  static Map<String, Share> others(List<Publication> view, String routerId, long nowMillis,
      long staleAfterMillis) {
    Map<String, Share> out = new HashMap<>();
    for (Publication p : view) {
      long age = nowMillis - p.atMillis();
      if (p.routerId().equals(routerId) || age > staleAfterMillis) {
        continue;
      }
      LoadExchanges.addShares(out, p.shares(), age);
    }
    return out;
  }

  /**
   * {@code ar1|<nowMillis>} then {@code \n<replica>\t<seconds>} per positive queue and
   * {@code \n\u0001<replica>\t<turnsPerSecond>} per positive turn rate (arguments checked by
   * {@link LoadExchanges#checkShares}).
   */
  static String encode(Map<String, Share> shares, long nowMillis) {
    StringBuilder b = new StringBuilder("ar1|").append(nowMillis);
    for (Map.Entry<String, Share> e : shares.entrySet()) {
      String id = e.getKey();
      if (id.isEmpty() || id.indexOf('\t') >= 0 || id.indexOf('\n') >= 0 || id.charAt(0) == TURNS) {
        continue;
      }
      Share v = e.getValue();
      if (v.queuedSeconds() > 0) {
        b.append('\n').append(id).append('\t').append(v.queuedSeconds());
      }
      if (v.sessionTurnsPerSecond() > 0) {
        b.append('\n').append(TURNS).append(id).append('\t').append(v.sessionTurnsPerSecond());
      }
    }
    return b.toString();
  }

  /** Parses the script's reply (field, value, ...); fields that do not parse are skipped. */
  static List<Publication> decodeAll(List<Object> reply) {
    List<Publication> out = new ArrayList<>(reply.size() / 2);
    for (int i = 0; i + 1 < reply.size(); i += 2) {
      Publication p = decode(String.valueOf(reply.get(i)), String.valueOf(reply.get(i + 1)));
      if (p != null) {
        out.add(p);
      }
    }
    return out;
  }

  /** One publication, or null if {@code value} is not one. */
  static @Nullable Publication decode(String routerId, String value) {
    if (!value.startsWith("ar1|")) {
      return null;
    }
    String[] lines = value.split("\n", -1);
    try {
      long at = Long.parseLong(lines[0].substring(4));
      Map<String, Double> queued = new HashMap<>();
      Map<String, Double> turns = new HashMap<>();
      for (int i = 1; i < lines.length; i++) {
        String line = lines[i];
        boolean isTurns = !line.isEmpty() && line.charAt(0) == TURNS;
        int tab = line.indexOf('\t');
        if (tab <= (isTurns ? 1 : 0)) {
          return null;
        }
        double v = Double.parseDouble(line.substring(tab + 1));
        if (!(v >= 0) || Double.isInfinite(v)) {
          return null;
        }
        (isTurns ? turns : queued).put(line.substring(isTurns ? 1 : 0, tab), v);
      }
      Map<String, Share> shares = new HashMap<>();
      queued.forEach((id, v) -> shares.put(id, new Share(v, turns.getOrDefault(id, 0.0))));
      turns.forEach((id, v) -> shares.putIfAbsent(id, new Share(0, v)));
      return new Publication(routerId, at, Map.copyOf(shares));
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** Stops exchanging (later calls return the last view, drained); the store stays open. */
  @Override
  public void close() {
    closed.set(true);
  }
}
