package io.affinityrouter.redis.testing;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * Reads {@code INFO commandstats} and counts the commands clients sent: every command except those
 * that scripts run inside {@code EVAL}/{@code EVALSHA} (Redis counts those too) and the test's own
 * {@code INFO}/{@code CONFIG}. Valid for runs in which clients send no plain GET/SET/PEXPIRE/TIME
 * or sorted-set commands (the fleet-wide limits send theirs inside scripts).
 */
public final class CommandStats {

  private static final Set<String> SCRIPT_INNER = Set.of("get", "set", "pexpire", "time", "publish",
      "zremrangebyscore", "zcard", "zadd", "zrem");

  private CommandStats() {}

  /** Calls per command name, e.g. {@code evalsha -> 1000}. */
  public static Map<String, Long> read(RedisProcess server) {
    Map<String, Long> calls = new HashMap<>();
    for (String line : server.cli("info", "commandstats").split("\\R")) {
      if (!line.startsWith("cmdstat_")) {
        continue;
      }
      String name = line.substring("cmdstat_".length(), line.indexOf(':'));
      int start = line.indexOf("calls=") + "calls=".length();
      int end = line.indexOf(',', start);
      calls.put(name, Long.parseLong(line.substring(start, end)));
    }
    return calls;
  }

  /** Commands sent by clients, per {@link CommandStats}'s rule. */
  public static long clientCommands(Map<String, Long> calls) {
    long total = 0;
    for (Map.Entry<String, Long> e : calls.entrySet()) {
      String name = e.getKey();
      if (SCRIPT_INNER.contains(name) || name.equals("info") || name.startsWith("config")) {
        continue;
      }
      total += e.getValue();
    }
    return total;
  }

  /** Resets the server's statistics. */
  public static void reset(RedisProcess server) {
    server.cli("config", "resetstat");
  }
}
