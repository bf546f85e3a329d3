package io.affinityrouter.internal;

import io.affinityrouter.spi.LoadExchange;
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
   * Adds one publication, {@code ageMillis} old, to {@code sums}: each replica's seconds less the age
   * in seconds, left out when nothing is left (the contract's drain rule).
   */
  public static void addDrained(Map<String, Double> sums, Map<String, Double> queuedSeconds,
      long ageMillis) {
    double drained = Math.max(0, ageMillis) / 1000.0;
    for (Map.Entry<String, Double> q : queuedSeconds.entrySet()) {
      double left = q.getValue() - drained;
      if (left > 0) {
        sums.merge(q.getKey(), left, Double::sum);
      }
    }
  }
}
