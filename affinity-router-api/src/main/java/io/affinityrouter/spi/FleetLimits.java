package io.affinityrouter.spi;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Per-replica in-flight request limits that hold across every router (gateway) of a fleet, not per
 * router: a router given one ({@code AffinityRouter.Builder.fleetLimits}) takes a slot on the
 * replica it routes to before it returns the decision, and frees it when the request's lease
 * closes. Implementations keep the slots where every router sees them (Redis:
 * {@code RedisBindingStore.fleetLimits()}), and let a slot expire after its lease time, so that a
 * router that dies frees its slots by itself. Thread-safe; never throws for a store outcome (the
 * stage completes exceptionally).
 */
public interface FleetLimits {
  /**
   * Takes one of {@code maxRequests} slots on {@code replicaId} if one is free fleet-wide.
   *
   * @param leaseTime how long the slot is held if it is never released
   * @return a permit, or empty when the replica is at its limit
   */
  CompletionStage<Optional<Permit>> acquire(String replicaId, int maxRequests, Duration leaseTime);

  /** A slot held on a replica. */
  interface Permit {
    /** Frees the slot, in the background; idempotent. */
    void release();
  }
}
