package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.examples.simulator.workload.SimRequest;
import org.jspecify.annotations.Nullable;

/**
 * One gateway's routing algorithm in the simulator. Each gateway of a run has its own instance (its
 * own local state, as the real routers do); shared state (a binding store) comes from the
 * {@link StrategyContext}.
 *
 * <p>Not thread-safe: the simulation calls an instance from one thread.
 */
public interface RoutingStrategy {

  /**
   * Picks a replica among {@link FleetView#replicas()} (never empty when called).
   *
   * @return the route; {@link Route#HOLD} to queue it at the gateway (offered again in arrival
   *     order when loads are scraped or a request of this gateway finishes); a {@link Route#later}
   *     route when the strategy's own queue holds it; or null when the strategy refuses it (a 429:
   *     its client sends it again after the Retry-After, up to its retry limit)
   */
  @Nullable Route route(SimRequest request, FleetView fleet);

  /**
   * As {@link #route(SimRequest, FleetView)}, for a request its client has sent {@code retries}
   * times before, refused (0: its first send), as the OpenAI SDKs' {@code x-stainless-retry-count}
   * header says. Strategies that do not read it route it as any other.
   */
  default @Nullable Route route(SimRequest request, FleetView fleet, int retries) {
    return route(request, fleet);
  }

  /** This gateway's loads were scraped ({@code fleet} has the new ones). */
  default void onScrape(FleetView fleet) {}

  /** The request's first output token arrived. */
  default void onFirstToken(SimRequest request, Route route) {}

  /** The request finished (or failed); {@code outputTokens} it produced. */
  default void onFinished(SimRequest request, Route route, int outputTokens) {}

  /**
   * A replica's engine cached tokens {@code [fromToken, toToken)} of {@code owner}'s prompt (its
   * prefill finished, or its answer, which the next turn repeats, was generated); tokens before
   * {@code fromToken} were cached already. Told to every gateway, as engines' KV events are.
   */
  default void onPrefixStored(String replicaId, SimRequest owner, int fromToken, int toToken) {}

  /** A replica's engine evicted the prompt segment with this chained key. */
  default void onSegmentEvicted(String replicaId, long segmentKey) {}

  /** A replica's engine dropped its whole cache (the replica was lost). */
  default void onReplicaCleared(String replicaId) {}
}
