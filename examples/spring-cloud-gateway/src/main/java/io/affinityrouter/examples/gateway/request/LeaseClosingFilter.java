package io.affinityrouter.examples.gateway.request;

import io.affinityrouter.RoutingDecision;
import io.affinityrouter.examples.gateway.loadbalancer.AffinityLoadBalancer;
import java.net.URI;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.NettyWriteResponseFilter;
import org.springframework.cloud.gateway.route.Route;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

/**
 * Ends each routed request's {@link io.affinityrouter.RequestLease} when the exchange really ends:
 * after the last byte of the response body went to the client (a streamed completion included),
 * on an error, or when the client goes away (cancel). It wraps Spring Cloud Gateway's
 * {@link NettyWriteResponseFilter}, which writes the body after the rest of the chain has
 * completed: everything inside it — including the load balancer's
 * {@code LoadBalancerLifecycle.onComplete(SUCCESS)} — finishes when the upstream response
 * <em>headers</em> arrive, which for a stream is about its first token.
 *
 * <p>It also marks the lease's first token when the first response bytes go out, and sets
 * {@link AffinityLoadBalancer#LEASE_ENDS_WITH_EXCHANGE_ATTR} so that
 * {@link io.affinityrouter.examples.gateway.loadbalancer.LeaseReleasingLifecycle} leaves successful
 * requests to it. Acts on routes to {@code lb://} services only. Thread-safe and stateless.
 */
public final class LeaseClosingFilter implements GlobalFilter, Ordered {
  /** This filter's order: just outside the response-writing filter. */
  public static final int ORDER = NettyWriteResponseFilter.WRITE_RESPONSE_FILTER_ORDER - 1;

  /** Creates the filter. */
  public LeaseClosingFilter() {}

  @Override
  public int getOrder() {
    return ORDER;
  }

  /** Runs the chain, then closes the exchange's lease however the exchange ended. */
  @Override
  public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
    Route route = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR);
    URI uri = route == null ? null : route.getUri();
    if (uri == null || !"lb".equals(uri.getScheme())) {
      return chain.filter(exchange);
    }
    exchange.getAttributes().put(AffinityLoadBalancer.LEASE_ENDS_WITH_EXCHANGE_ATTR, Boolean.TRUE);
    ServerWebExchange marking = exchange.mutate()
        .response(new FirstTokenResponse(exchange.getResponse(), exchange))
        .build();
    return chain.filter(marking).doFinally(signal -> closeLease(exchange));
  }

  private static void closeLease(ServerWebExchange exchange) {
    Object d = exchange.getAttribute(AffinityLoadBalancer.DECISION_ATTR);
    if (d instanceof RoutingDecision decision && decision.isRouted()) {
      decision.lease().close();
    }
  }
}
