package io.affinityrouter;

/** What the gateway's health checking says of a replica. */
public enum ReplicaHealth {
  /** Serving normally. */
  HEALTHY,
  /**
   * Being drained (scale-in, rollout): sessions already pinned to it stay there, but it receives no
   * new sessions and no requests without a session, even when every replica is draining (those are
   * then not routed, {@link RoutingReason#NO_REPLICA}).
   */
  DRAINING,
  /** Failing health checks: nothing is routed to it and its sessions are repinned. */
  UNHEALTHY
}
