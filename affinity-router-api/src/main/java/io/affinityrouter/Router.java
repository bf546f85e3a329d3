package io.affinityrouter;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Routes LLM inference requests to replicas: keeps sessions on the replica that holds their KV cache,
 * sends prompts to where their prefix is cached, and weighs both against each replica's load in
 * tokens. Built by {@code io.affinityrouter.core.AffinityRouter.builder()}.
 *
 * <p>Thread-safe: one router serves all of a gateway's threads. {@code select} never throws for a
 * routing outcome (no replica, all at their limit, model asleep, binding store down); every outcome
 * is a {@link RoutingDecision}. It throws only for programmer errors, such as a replica list with
 * duplicate ids.
 */
public interface Router extends AutoCloseable {

  /**
   * Chooses a replica for the request among {@code replicas} and, when routed, opens a
   * {@link RequestLease} on it. May wait for the binding store up to the router's store timeout,
   * and, when the router holds the request because the fleet is saturated, until it is admitted or
   * refused at its hold deadline; use {@link #selectAsync} on event-loop threads. A caller
   * interrupted while held leaves the queue and gets that refusal
   * ({@link RoutingReason#ALL_AT_LIMIT}), its interrupt status kept.
   *
   * @param request the request
   * @param replicas the replicas to choose from, as the gateway currently knows them (may be empty:
   *     the decision is then {@link RoutingReason#NO_REPLICA})
   * @return the decision, never null
   * @throws IllegalArgumentException if two replicas share an id
   */
  RoutingDecision select(RoutingRequest request, List<Replica> replicas);

  /**
   * As {@link #select}, without blocking the calling thread: the stage completes when the request
   * is admitted and the binding store answers or the store timeout expires (then with a degraded
   * decision). A request the router holds completes when it is admitted, or as
   * {@link RoutingReason#ALL_AT_LIMIT} at its hold deadline; no thread waits for it meanwhile.
   * When the client goes away, cancel the stage ({@code toCompletableFuture().cancel(false)}): a
   * held request leaves the queue, and one admitted meanwhile has its lease closed. The stage never
   * completes exceptionally for a routing outcome.
   *
   * @throws IllegalArgumentException if two replicas share an id
   */
  CompletionStage<RoutingDecision> selectAsync(RoutingRequest request, List<Replica> replicas);

  /**
   * Tells the router the replicas' current state without routing anything (call it after a
   * metrics scrape): requests it holds are offered again against it. Cheap; does nothing when
   * nothing is held.
   */
  default void refresh(List<Replica> replicas) {}

  /**
   * Tells the router a replica is gone for good (its pod deleted, its endpoint dropped by
   * discovery): the router forgets its load state and, shortly after, its prefix-cache entries,
   * so memory follows the live fleet. Requests in flight on it still complete normally; a replica
   * offered again under the same id starts cold. Routers also forget replicas left unused for a
   * while on their own; this is for a caller that knows sooner.
   *
   * @return whether the router knew the replica
   */
  default boolean retire(String replicaId) {
    return false;
  }

  /** Requests this router holds now, waiting for room in the fleet ({@code 0} if it holds none). */
  default int heldRequests() {
    return 0;
  }

  /**
   * Returns a copy of the request whose prompt is replaced by its chained block hashes, as this
   * router computes them; selecting it later skips the hashing and carries no prompt content. The
   * hashes are valid for routers with the same prefix configuration (block sizes, hash seed).
   */
  RoutingRequest prehash(RoutingRequest request);

  /** The entry point for exact prefix-cache events from the engines (e.g. vLLM KV events). */
  PrefixCacheEvents cacheEvents();

  /** Releases what the router owns (a binding store it created from a provider). Idempotent. */
  @Override
  void close();
}
