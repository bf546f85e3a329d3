package io.affinityrouter.internal;

import io.affinityrouter.spi.LoadExchange;
import io.affinityrouter.spi.LoadExchange.Share;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/** What the library's {@link LoadExchange} implementations share. Not API (see the package). */
public final class LoadExchanges {
  private LoadExchanges() {}

  /**
   * Checks {@link LoadExchange#exchange}'s arguments.
   *
   * @throws IllegalArgumentException if {@code routerId} is blank or a value is negative, not
   *     finite or null
   */
  public static void checkArguments(String routerId, Map<String, Double> queuedSeconds) {
    Checks.notBlank(routerId, "routerId");
    Objects.requireNonNull(queuedSeconds, "queuedSeconds");
    for (Map.Entry<String, Double> e : queuedSeconds.entrySet()) {
      String name = "queuedSeconds of " + Objects.requireNonNull(e.getKey(), "replica id");
      Checks.nonNegativeFinite(Objects.requireNonNull(e.getValue(), name), name);
    }
  }

  /**
   * Checks {@link LoadExchange#share}'s arguments.
   *
   * @throws IllegalArgumentException if {@code routerId} is blank or a share or id is null
   */
  public static void checkShares(String routerId, Map<String, Share> mine) {
    Checks.notBlank(routerId, "routerId");
    Objects.requireNonNull(mine, "mine");
    for (Map.Entry<String, Share> e : mine.entrySet()) {
      Objects.requireNonNull(e.getValue(),
          "share of " + Objects.requireNonNull(e.getKey(), "replica id"));
    }
  }

  /** Queued seconds as shares without turns. */
  public static Map<String, Share> shares(Map<String, Double> queuedSeconds) {
    Map<String, Share> out = new HashMap<>();
    for (Map.Entry<String, Double> e : queuedSeconds.entrySet()) {
      out.put(e.getKey(), new Share(e.getValue(), 0));
    }
    return out;
  }

  /** The queued seconds of shares, the replicas with none left out. */
  public static Map<String, Double> queued(Map<String, Share> shares) {
    Map<String, Double> out = new HashMap<>();
    for (Map.Entry<String, Share> e : shares.entrySet()) {
      if (e.getValue().queuedSeconds() > 0) {
        out.put(e.getKey(), e.getValue().queuedSeconds());
      }
    }
    return out;
  }

  /**
   * Adds one publication, {@code ageMillis} old, to {@code sums}: queued seconds less the age in
   * seconds, never below zero (the contract's drain rule), turn rates as published; a replica left
   * with neither is left out.
   */
  public static void addShares(Map<String, Share> sums, Map<String, Share> published,
      long ageMillis) {
    double drained = Math.max(0, ageMillis) / 1000.0;
    for (Map.Entry<String, Share> e : published.entrySet()) {
      double left = Math.max(0, e.getValue().queuedSeconds() - drained);
      double turns = e.getValue().sessionTurnsPerSecond();
      if (left > 0 || turns > 0) {
        sums.merge(e.getKey(), new Share(left, turns), (a, b) -> new Share(
            a.queuedSeconds() + b.queuedSeconds(),
            a.sessionTurnsPerSecond() + b.sessionTurnsPerSecond()));
      }
    }
  }
}
