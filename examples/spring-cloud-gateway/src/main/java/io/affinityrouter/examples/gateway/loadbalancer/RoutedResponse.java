package io.affinityrouter.examples.gateway.loadbalancer;

import io.affinityrouter.RoutingDecision;
import java.util.Objects;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;

/**
 * A load-balancer response that chose an instance, carrying the router's decision and so its
 * {@link io.affinityrouter.RequestLease}, which {@link LeaseReleasingLifecycle} closes when the
 * request completes. Immutable and thread-safe.
 */
public final class RoutedResponse extends DefaultResponse {
  private final RoutingDecision decision;

  /**
   * Creates a response for a routed decision.
   *
   * @throws IllegalArgumentException if the decision is not routed
   */
  public RoutedResponse(ServiceInstance instance, RoutingDecision decision) {
    super(Objects.requireNonNull(instance, "instance"));
    if (!decision.isRouted()) {
      throw new IllegalArgumentException(
          "decision: " + decision.reason() + " (expected: a routed decision)");
    }
    this.decision = decision;
  }

  /** The router's decision. */
  public RoutingDecision decision() {
    return decision;
  }

  // equals and hashCode: DefaultResponse's (the instance) are kept on purpose; two responses for
  // the same instance are the same choice to Spring Cloud.
}
