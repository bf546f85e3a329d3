package io.affinityrouter;

/** What the gateway's health checking says of a replica. */
public enum ReplicaHealth {
  /** Serving normally. */
  HEALTHY,
  /**
   * Being drained (scale-in, rollout): sessions already pinned to it stay there, but it receives no
   * new sessions and no requests without a session.
   */
  DRAINING,
  /** Failing health checks: nothing is routed to it and its sessions are repinned. */
  UNHEALTHY
}
