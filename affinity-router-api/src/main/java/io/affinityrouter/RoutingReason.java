package io.affinityrouter;

/** Why a {@link RoutingDecision} came out as it did. */
public enum RoutingReason {
  /** No session id: the best-scored replica (least-request-top-k among the cheapest). */
  BEST_SCORE(true),
  /** First turn of a session: this router's candidate was claimed for it. */
  SESSION_CLAIMED(true),
  /** The session's bound replica kept it (affinity). */
  SESSION_AFFINITY(true),
  /**
   * Another gateway claimed or repinned the session first (a race) and this router adopted its
   * choice.
   */
  SESSION_ADOPTED(true),
  /** The session was moved to a new replica; {@link RoutingDecision#repinCause()} says why. */
  SESSION_REPINNED(true),
  /**
   * The binding store was unreachable or too slow: routed by the deterministic fallback (rendezvous
   * hashing of the session over the eligible replicas) that every gateway computes alike.
   */
  DEGRADED_FALLBACK(true),
  /** Not routed: no replica in the list serves the model or passes health and filters. */
  NO_REPLICA(false),
  /** Not routed: every eligible replica is at its in-flight request or token limit. */
  ALL_AT_LIMIT(false),
  /** Not routed: the model is asleep on every replica that hosts it; a wake was requested. */
  MODEL_WAKING(false),
  /** Not routed: the model is still loading on every replica that hosts it. */
  MODEL_LOADING(false);

  private final boolean routed;

  RoutingReason(boolean routed) {
    this.routed = routed;
  }

  /** Whether decisions with this reason carry a replica. */
  public boolean isRouted() {
    return routed;
  }
}
