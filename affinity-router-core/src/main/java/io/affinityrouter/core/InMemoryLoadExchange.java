package io.affinityrouter.core;

import io.affinityrouter.internal.Checks;
import io.affinityrouter.internal.LoadExchanges;
import io.affinityrouter.spi.LoadExchange;
import io.affinityrouter.spi.LoadExchange.Share;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link LoadExchange} for routers in one JVM (several gateways' routers in one process, tests,
 * the fleet simulator): publications live in a concurrent map, and a router's exchange sees the
 * others' latest ones at once. Publications older than the staleness limit (a router that stopped
 * exchanging) are dropped. Thread-safe.
 */
public final class InMemoryLoadExchange implements LoadExchange {
  /** Default staleness limit: 10 s. */
  public static final Duration DEFAULT_STALE_AFTER = Duration.ofSeconds(10);

  private record Publication(Map<String, Share> shares, long atMillis) {}

  private final ConcurrentHashMap<String, Publication> publications = new ConcurrentHashMap<>();
  private final long staleAfterMillis;

  /** Creates an exchange with {@link #DEFAULT_STALE_AFTER}. */
  public InMemoryLoadExchange() {
    this(DEFAULT_STALE_AFTER);
  }

  /**
   * Creates an exchange that ignores publications older than {@code staleAfter}.
   *
   * @throws IllegalArgumentException if {@code staleAfter} is not positive
   */
  public InMemoryLoadExchange(Duration staleAfter) {
    this.staleAfterMillis = Checks.positive(staleAfter, "staleAfter").toMillis();
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
    publications.put(routerId, new Publication(Map.copyOf(mine), nowMillis));
    Map<String, Share> others = new HashMap<>();
    for (Map.Entry<String, Publication> e : publications.entrySet()) {
      Publication p = e.getValue();
      long age = nowMillis - p.atMillis();
      if (e.getKey().equals(routerId)) {
        continue;
      }
      if (age > staleAfterMillis) {
        publications.remove(e.getKey(), p);
        continue;
      }
      LoadExchanges.addShares(others, p.shares(), age);
    }
    return others;
  }

  @Override
  public void close() {
    publications.clear();
  }
}
