package io.affinityrouter;

/** The state of one model on one replica. */
public enum ModelState {
  /** Loaded and serving: requests for the model may be routed to the replica. */
  ACTIVE,
  /**
   * Put to sleep (weights offloaded, e.g. vLLM's {@code /sleep}); the replica must be woken before it
   * serves the model. The router never routes to it while an awake replica exists, and when none is
   * awake it asks a {@link io.affinityrouter.spi.RoutingListener} to wake one.
   */
  SLEEPING,
  /** Loading or waking up: it will serve soon, but not yet. */
  LOADING
}
