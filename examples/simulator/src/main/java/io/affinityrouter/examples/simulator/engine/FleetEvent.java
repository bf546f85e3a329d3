package io.affinityrouter.examples.simulator.engine;

/**
 * A change of the fleet during a run.
 *
 * @param atNanos when, in simulated time
 * @param replica the fleet index of the replica
 * @param kind what happens
 */
public record FleetEvent(long atNanos, int replica, Kind kind) {
  /** What happens to the replica. */
  public enum Kind {
    /** It becomes ready (scale-out); it starts with an empty cache. */
    READY,
    /** It is lost: its requests fail and are retried elsewhere by their gateway. */
    LOST
  }
}
