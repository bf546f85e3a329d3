package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import io.affinityrouter.RequestLease;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.core.EngineProfile;
import io.affinityrouter.core.InMemoryBindingStore;
import io.affinityrouter.core.InMemoryLoadExchange;
import io.affinityrouter.examples.simulator.workload.PromptTokens;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import io.affinityrouter.spi.RoutingListener;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * The real router ({@link AffinityRouter}) on simulated time: one {@link Router} per gateway, built
 * with the run's clock and a seeded random source, all gateways sharing one
 * {@link InMemoryBindingStore} on the same clock. It sees the replicas with their scraped loads, gets
 * each prompt as synthetic tokens derived from the trace's block ids (so its own chained hashing sees
 * equal prefixes as equal), and its lease is marked at the first token and completed with the output
 * tokens when the simulated request finishes. Not thread-safe (one per gateway).
 */
final class AffinityRouterStrategy implements RoutingStrategy {
  private final Router router;
  private final PromptTokens tokens;
  private final boolean sessions;
  private final @Nullable KvEventFeed kvEvents;

  private AffinityRouterStrategy(StrategyContext context, int gateway, boolean sessions,
      boolean kvEvents, long loadExchangeMillis, UnaryOperator<AffinityRouter.Builder> tuning) {
    InMemoryBindingStore store = context.shared("affinity-router.store",
        () -> InMemoryBindingStore.builder().clock(context.clock()).build());
    this.tokens = context.shared("affinity-router.tokens", PromptTokens::new);
    AffinityRouter.Builder builder = AffinityRouter.builder();
    if (loadExchangeMillis == 0) { // the store's own exchange is the default: off on request
      builder.noLoadExchange();
    } else if (loadExchangeMillis > 0) { // the gateways' routers share one exchange
      builder.loadExchange(context.shared("affinity-router.load-exchange",
          InMemoryLoadExchange::new), "gateway-" + gateway, Duration.ofMillis(loadExchangeMillis));
    }
    this.router = tuning.apply(builder
        .bindingStore(store)
        .clock(context.clock())
        .holdScheduler(context.scheduler())
        .executor(Runnable::run) // maintenance in simulated time, on the simulation's thread
        .random(new SplittableRandom(context.seedFor(gateway)))
        .addListener(new RoutingListener() { // the gateway's wake call, in the simulated fleet
          @Override
          public void onWakeRequested(Replica replica, String model) {
            context.requestWake(replica.id());
          }
        }))
        .build();
    this.sessions = sessions;
    this.kvEvents = kvEvents
        ? context.shared("affinity-router.kv-events", () -> new KvEventFeed(tokens)) : null;
  }

  /**
   * The registered variants: the defaults, and the defaults without session ids (prefix locality
   * and load only). The KV-event-fed router is a {@link #variant} ({@code kvEvents:true}), left out
   * of the default comparison to keep it short.
   */
  static List<StrategyRegistry.Entry> entries() {
    return List.of(
        new StrategyRegistry.Entry("affinity-router", "the real router, default configuration",
            (c, g) -> new AffinityRouterStrategy(c, g, true, false, -1, b -> b), false),
        new StrategyRegistry.Entry("affinity-router-nosess",
            "the real router, requests without session ids (prefix locality and load only)",
            (c, g) -> new AffinityRouterStrategy(c, g, false, false, -1, b -> b), false));
  }

  /**
   * A variant of the real router with some builder options changed: {@code settings} maps option
   * names to values. Options: {@code topK}, {@code prefixIndexEntries}; the engine profile's
   * figures {@code prefillTokensPerSecond}, {@code batchSlowdownSequences},
   * {@code runningSequenceSeconds}, {@code attentionSeconds} (each replaces the default profile's);
   * {@code sessions} ({@code false} to drop session ids), {@code kvEvents} ({@code true} to feed
   * the engines' KV events), {@code loadExchangeMillis} (the gateways' routers share their queued
   * prefill through one in-memory {@link io.affinityrouter.spi.LoadExchange} at this interval; 0:
   * they do not; by default they use their shared store's exchange every 100 ms).
   *
   * @throws IllegalArgumentException on an unknown option or a bad value
   */
  static StrategyRegistry.Entry variant(String name, Map<String, String> settings) {
    Map<String, String> copy = new TreeMap<>(settings);
    boolean sessions = !"false".equals(copy.getOrDefault("sessions", "true"));
    boolean kv = "true".equals(copy.getOrDefault("kvEvents", "false"));
    long exchangeMillis;
    for (String key : copy.keySet()) {
      if (!OPTIONS.contains(key)) {
        throw new IllegalArgumentException("router option: " + key + " (expected: one of "
            + OPTIONS + ")");
      }
    }
    try {
      exchangeMillis = Long.parseLong(copy.getOrDefault("loadExchangeMillis", "-1"));
      if (exchangeMillis < 0 && copy.containsKey("loadExchangeMillis")) {
        throw new IllegalArgumentException("loadExchangeMillis: " + exchangeMillis
            + " (expected: >= 0)");
      }
      EngineProfile engine = AffinityRouter.Builder.DEFAULT_ENGINE_PROFILE;
      for (Map.Entry<String, String> e : copy.entrySet()) {
        engine = switch (e.getKey()) {
          case "prefillTokensPerSecond" ->
              engine.withPrefillTokensPerSecond(Double.parseDouble(e.getValue()));
          case "batchSlowdownSequences" ->
              engine.withBatchSlowdownSequences(Double.parseDouble(e.getValue()));
          case "runningSequenceSeconds" ->
              engine.withRunningSequenceSeconds(Double.parseDouble(e.getValue()));
          case "attentionSeconds" -> engine.withAttentionSeconds(Double.parseDouble(e.getValue()));
          default -> engine;
        };
      }
      EngineProfile profile = engine;
      UnaryOperator<AffinityRouter.Builder> tuning = b -> {
        b.engineProfile(profile);
        copy.forEach((k, v) -> {
          switch (k) {
            case "topK" -> b.topK(Integer.parseInt(v));
            case "hold" -> {
              if ("true".equals(v) && !copy.containsKey("maxHoldMillis")) {
                b.holdQueue();
              }
            }
            case "maxHoldMillis" -> b.holdQueue(AffinityRouter.Builder.DEFAULT_MAX_HELD_REQUESTS,
                AffinityRouter.Builder.DEFAULT_MAX_HELD_BYTES,
                Duration.ofMillis(Long.parseLong(v)));
            case "holdThresholdMillis" -> b.holdThreshold(Duration.ofMillis(Long.parseLong(v)));
            case "prefixIndexEntries" -> b.prefixIndexEntries(Long.parseLong(v));
            default -> { }
          }
        });
        return b;
      };
      tuning.apply(AffinityRouter.builder());
      return new StrategyRegistry.Entry(name, "the real router with " + copy,
          (c, g) -> new AffinityRouterStrategy(c, g, sessions, kv, exchangeMillis, tuning), false);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("router options: " + copy + " (expected: numbers)", e);
    }
  }

  private static final List<String> OPTIONS = List.of("topK", "prefixIndexEntries", "hold",
      "maxHoldMillis", "holdThresholdMillis",
      "prefillTokensPerSecond", "batchSlowdownSequences", "runningSequenceSeconds",
      "attentionSeconds", "sessions", "kvEvents", "loadExchangeMillis");

  @Override
  public Route route(SimRequest request, FleetView fleet) {
    return route(request, fleet, 0);
  }

  @Override
  public Route route(SimRequest request, FleetView fleet, int retries) {
    RoutingRequest.Builder b = RoutingRequest.builder().promptTokens(tokens.tokens(request))
        .retries(retries);
    if (sessions && request.session() != null) {
      b.sessionId(request.session());
    }
    CompletableFuture<RoutingDecision> f =
        router.selectAsync(b.build(), fleet.replicas()).toCompletableFuture();
    if (f.isDone()) {
      return route(f.join(), fleet);
    }
    return Route.later(f.thenApply(d -> route(d, fleet)));
  }

  private static @Nullable Route route(RoutingDecision d, FleetView fleet) {
    if (!d.isRouted()) {
      return null;
    }
    String reason = d.reason().name()
        + d.repinCause().map(c -> "/" + c.name()).orElse("");
    return new Route(fleet.indexOf(d.replica()), reason,
        d.reason() == RoutingReason.SESSION_REPINNED, d.lease());
  }

  @Override
  public void onScrape(FleetView fleet) {
    router.refresh(fleet.replicas());
  }

  @Override
  public void onPrefixStored(String replicaId, SimRequest owner, int fromToken, int toToken) {
    if (kvEvents != null) {
      kvEvents.stored(router.cacheEvents(), replicaId, owner, fromToken, toToken);
    }
  }

  @Override
  public void onSegmentEvicted(String replicaId, long segmentKey) {
    if (kvEvents != null) {
      kvEvents.evicted(router.cacheEvents(), replicaId, segmentKey);
    }
  }

  @Override
  public void onReplicaCleared(String replicaId) {
    if (kvEvents != null) {
      kvEvents.cleared(router.cacheEvents(), replicaId);
    }
  }

  @Override
  public void onFirstToken(SimRequest request, Route route) {
    RequestLease lease = route.lease();
    if (lease != null) {
      lease.markFirstToken();
    }
  }

  @Override
  public void onFinished(SimRequest request, Route route, int outputTokens) {
    RequestLease lease = route.lease();
    if (lease != null) {
      lease.complete(outputTokens);
    }
  }
}
