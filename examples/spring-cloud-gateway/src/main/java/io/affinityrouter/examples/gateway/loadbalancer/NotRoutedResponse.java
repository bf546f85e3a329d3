package io.affinityrouter.examples.gateway.loadbalancer;

import io.affinityrouter.RoutingDecision;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Response;

/**
 * A load-balancer response without an instance because the router did not route the request (all
 * replicas at their limit, model asleep or loading, no replica for the model). Spring Cloud Gateway
 * turns it into a {@code NotFoundException}, which
 * {@link io.affinityrouter.examples.gateway.request.InferenceRequestFilter} answers with
 * {@code 429} or {@code 503} and {@code Retry-After}. Never a random instance. Immutable.
 */
public final class NotRoutedResponse implements Response<ServiceInstance> {
  private final RoutingDecision decision;

  /**
   * Creates a response for a decision that routes nothing.
   *
   * @throws IllegalArgumentException if the decision is routed
   */
  public NotRoutedResponse(RoutingDecision decision) {
    if (decision.isRouted()) {
      throw new IllegalArgumentException(
          "decision: " + decision.reason() + " (expected: a not-routed decision)");
    }
    this.decision = decision;
  }

  /** The router's decision. */
  public RoutingDecision decision() {
    return decision;
  }

  /** Always false. */
  @Override
  public boolean hasServer() {
    return false;
  }

  /** Always null, as Spring Cloud's {@code EmptyResponse}. */
  @Override
  public ServiceInstance getServer() {
    return null;
  }

  @Override
  public String toString() {
    return "NotRoutedResponse{" + decision.explain() + '}';
  }
}
