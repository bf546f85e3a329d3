package io.affinityrouter;

/** Why a session left the replica it was pinned to. */
public enum RepinCause {
  /** The bound replica is no longer in the replica list passed to {@code select}. */
  REPLICA_GONE,
  /** The bound replica is {@link ReplicaHealth#UNHEALTHY}. */
  REPLICA_UNHEALTHY,
  /**
   * A {@link io.affinityrouter.spi.ReplicaFilter} refused the bound replica for this request (or
   * threw).
   */
  REPLICA_FILTERED,
  /** The bound replica does not serve the request's model awake any more. */
  MODEL_UNAVAILABLE,
  /**
   * The bound replica is at its in-flight request or token limit.
   *
   * @deprecated no longer given: a returning turn whose replica is at its limit waits for it (or
   *     is refused as {@link RoutingReason#ALL_AT_LIMIT}); moving it would recompute its context.
   */
  @Deprecated
  REPLICA_AT_LIMIT,
  /**
   * The bound replica's estimated time to first token, even with the session's cache, exceeds the
   * best alternative's (which must recompute the prefix) by more than the configured threshold.
   */
  REPLICA_OVERLOADED,
  /**
   * The binding store was unreachable for earlier turns of the session, which were routed by the
   * degraded fallback; the binding is moved to where those turns went.
   */
  RECONCILED
}
