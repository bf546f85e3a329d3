package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.examples.simulator.strategy.SglangCacheAwareStrategy.Miss;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The strategies the simulator knows, by name (as Caffeine's simulator registers its policies).
 * Immutable and thread-safe.
 */
public final class StrategyRegistry {
  /** Creates one gateway's instance of a strategy. */
  public interface Factory {
    /** Returns the instance for gateway {@code gateway} of a run. */
    RoutingStrategy create(StrategyContext context, int gateway);
  }

  /**
   * A registered strategy.
   *
   * @param name its name on the command line and in reports
   * @param description one line
   * @param factory creates per-gateway instances
   * @param infiniteCache whether the run gives the whole fleet one cache that never evicts (the
   *     infinite-cache bound)
   * @param scrapeNanos how often this strategy's gateways scrape the engines' metrics, or 0 for the
   *     run's interval ({@code --scrape-ms})
   */
  public record Entry(String name, String description, Factory factory, boolean infiniteCache,
      long scrapeNanos) {

    /** An entry that scrapes at the run's interval. */
    public Entry(String name, String description, Factory factory, boolean infiniteCache) {
      this(name, description, factory, infiniteCache, 0);
    }

    /**
     * Validates.
     *
     * @throws IllegalArgumentException if {@code scrapeNanos} is negative
     */
    public Entry {
      if (scrapeNanos < 0) {
        throw new IllegalArgumentException("scrapeNanos: " + scrapeNanos + " (expected: >= 0)");
      }
    }
  }

  private final Map<String, Entry> entries;
  private final Set<String> routers;

  private StrategyRegistry(Map<String, Entry> entries, Set<String> routers) {
    this.entries = Collections.unmodifiableMap(entries);
    this.routers = Collections.unmodifiableSet(routers);
  }

  /** The standard registry: the real router's variants, every emulated peer, and the bound. */
  public static StrategyRegistry standard() {
    Map<String, Entry> m = new LinkedHashMap<>();
    Set<String> routers = new LinkedHashSet<>();
    for (Entry e : AffinityRouterStrategy.entries()) {
      m.put(e.name(), e);
      routers.add(e.name());
    }
    add(m, "random", "uniformly random replica", (c, g) -> new RandomStrategy(c.seedFor(g)));
    add(m, "round-robin", "round robin per gateway", (c, g) -> new RoundRobinStrategy(g));
    add(m, "least-request", "fewest in-flight requests (gateway-local)",
        (c, g) -> new LeastRequestStrategy(c.seedFor(g)));
    add(m, "consistent-hash", "production-stack session hash ring",
        (c, g) -> new ConsistentHashStrategy(c.seedFor(g)));
    add(m, "sglang-cache-aware", "SGLang gateway cache_aware (approx. tree, miss: least loaded)",
        (c, g) -> new SglangCacheAwareStrategy(c.seedFor(g), Miss.LEAST_LOADED));
    add(m, "sglang-cache-aware-2025", "SGLang router cache_aware to Nov 2025 (miss: smallest tree)",
        (c, g) -> new SglangCacheAwareStrategy(c.seedFor(g), Miss.SMALLEST_TREE));
    // llm-d's endpoint picker scrapes every 50 ms, whatever the run's --scrape-ms
    long llmdScrape = LlmdScorerStrategy.REFRESH_METRICS_INTERVAL_NANOS;
    add(m, "llm-d", "llm-d router defaults 3·prefix + 2·queue + 2·kv (64-token blocks)",
        (c, g) -> new LlmdScorerStrategy(c.seedFor(g), LlmdScorerStrategy.CURRENT), llmdScrape);
    add(m, "llm-d-2025", "llm-d scorers on GAIE v1.0-v1.1 prefix defaults (64-char blocks)",
        (c, g) -> new LlmdScorerStrategy(c.seedFor(g), LlmdScorerStrategy.GAIE_2025),
        llmdScrape);
    add(m, "llm-d-flow-control", "llm-d with flow control: held at the gateway while saturated",
        (c, g) -> new LlmdFlowControlStrategy(c.seedFor(g)), llmdScrape);
    add(m, "dynamo-kv", "Dynamo KV router cost (exact KV events)",
        (c, g) -> new DynamoKvCostStrategy(c.seedFor(g)));
    add(m, "aibrix-prefix", "AIBrix prefix-cache",
        (c, g) -> new AibrixPrefixCacheStrategy(c.seedFor(g)));
    add(m, "aibrix-topk", "least-request top-k (k=5, eps=4, 300 s ramp)",
        (c, g) -> new LeastRequestTopKStrategy(c.seedFor(g)));
    m.put("infinite-cache", new Entry("infinite-cache",
        "bound: one never-evicting fleet-wide cache, least-request",
        (c, g) -> new LeastRequestStrategy(c.seedFor(g)), true));
    return new StrategyRegistry(m, routers);
  }

  private static void add(Map<String, Entry> m, String name, String description, Factory f) {
    add(m, name, description, f, 0);
  }

  private static void add(Map<String, Entry> m, String name, String description, Factory f,
      long scrapeNanos) {
    m.put(name, new Entry(name, description, f, false, scrapeNanos));
  }

  /**
   * Returns this registry plus variants of the real router, given as
   * {@code name=option:value,option:value;name2=...} (options of
   * {@code AffinityRouterStrategy.variant}).
   *
   * @throws IllegalArgumentException on a malformed spec or an unknown option
   */
  public StrategyRegistry withRouterVariants(String spec) {
    Map<String, Entry> m = new LinkedHashMap<>(entries);
    Set<String> r = new LinkedHashSet<>(routers);
    for (String part : spec.split(";")) {
      if (part.isBlank()) {
        continue;
      }
      int eq = part.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException(
            "variant: " + part + " (expected: name=option:value,option:value)");
      }
      String name = part.substring(0, eq).trim();
      Map<String, String> settings = new LinkedHashMap<>();
      for (String kv : part.substring(eq + 1).split(",")) {
        String[] pair = kv.split(":", 2);
        if (pair.length != 2) {
          throw new IllegalArgumentException("variant option: " + kv + " (expected: option:value)");
        }
        settings.put(pair[0].trim(), pair[1].trim());
      }
      m.put(name, AffinityRouterStrategy.variant(name, settings));
      r.add(name);
    }
    return new StrategyRegistry(m, r);
  }

  /** Whether {@code name} is the real router or one of its variants. */
  public boolean isRouter(String name) {
    return routers.contains(name);
  }

  /**
   * Whether {@code name} is a peer: a registered strategy that is neither the real router (or a
   * variant of it) nor the infinite-cache bound.
   */
  public boolean isPeer(String name) {
    Entry e = entries.get(name);
    return e != null && !e.infiniteCache() && !routers.contains(name);
  }

  /** All entries, in registration order. */
  public List<Entry> all() {
    return new ArrayList<>(entries.values());
  }

  /**
   * The entries with the given names, in the given order.
   *
   * @throws IllegalArgumentException if a name is unknown
   */
  public List<Entry> select(List<String> names) {
    List<Entry> out = new ArrayList<>();
    for (String n : names) {
      Entry e = entries.get(n);
      if (e == null) {
        throw new IllegalArgumentException(
            "strategy: " + n + " (expected: one of " + entries.keySet() + ")");
      }
      out.add(e);
    }
    return out;
  }
}
