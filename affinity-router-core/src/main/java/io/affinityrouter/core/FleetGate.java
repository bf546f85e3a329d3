package io.affinityrouter.core;

import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.spi.FleetLimits;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The fleet-wide limit, after the decide stage: a routed decision gets a slot on its replica from
 * the {@link FleetLimits} before it is returned, freed when its lease closes ({@link GatedLease});
 * a replica at its limit fleet-wide makes the request {@link RoutingReason#ALL_AT_LIMIT} (the
 * session stays pinned: shedding, not moving). A limits store that does not answer within the store timeout
 * leaves the local limits alone in force (and a slot granted later is freed). Notifies the
 * listeners of the final decision. Thread-safe.
 */
final class FleetGate {
  private final FleetLimits fleet;
  private final Duration leaseTime;
  private final long timeoutNanos;
  private final Limits limits;
  private final Duration atLimitRetryAfter;
  private final Listeners listeners;

  FleetGate(FleetLimits fleet, Duration leaseTime, Duration timeout, Limits limits,
      Duration atLimitRetryAfter, Listeners listeners) {
    this.fleet = fleet;
    this.leaseTime = leaseTime;
    this.timeoutNanos = timeout.toNanos();
    this.limits = limits;
    this.atLimitRetryAfter = atLimitRetryAfter;
    this.listeners = listeners;
  }

  CompletionStage<RoutingDecision> gate(RoutingRequest request, Outcome outcome, long startNanos) {
    return outcome.stage().thenCompose(d -> admit(d)).thenApply(d -> {
      if (d != DefaultRouter.HELD && !listeners.isEmpty()) {
        listeners.decision(request, d, System.nanoTime() - startNanos);
      }
      return d;
    });
  }

  /** A slot granted after the decision went on without it: freed. */
  private static void releaseLate(Object ignored, Optional<FleetLimits.Permit> permit) {
    permit.ifPresent(FleetLimits.Permit::release);
  }

  private CompletionStage<RoutingDecision> admit(RoutingDecision d) {
    if (!d.isRouted()) {
      return CompletableFuture.completedFuture(d);
    }
    int max = limits.maxRequests(d.replica());
    if (max == Integer.MAX_VALUE) {
      return CompletableFuture.completedFuture(d);
    }
    CompletionStage<Optional<FleetLimits.Permit>> answer;
    try {
      answer = Bounded.within(fleet.acquire(d.replica().id(), max, leaseTime), timeoutNanos,
          FleetGate::releaseLate, null);
    } catch (RuntimeException e) {
      answer = CompletableFuture.failedFuture(e);
    }
    return answer.handle((permit, ex) -> {
      if (ex != null) {
        listeners.pluginFailure("fleetLimits", ex);
        return d;
      }
      if (permit.isPresent()) {
        return d.withLease(new GatedLease(d.lease(), permit.get()));
      }
      d.lease().close();
      return RoutingDecision.notRouted(RoutingReason.ALL_AT_LIMIT, atLimitRetryAfter);
    });
  }
}
