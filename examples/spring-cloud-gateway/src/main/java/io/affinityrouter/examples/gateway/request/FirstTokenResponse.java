package io.affinityrouter.examples.gateway.request;

import io.affinityrouter.RoutingDecision;
import io.affinityrouter.examples.gateway.loadbalancer.AffinityLoadBalancer;
import org.reactivestreams.Publisher;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A response that tells the request's lease when the first bytes of the upstream answer go out to
 * the client: for a streamed completion that is the first token, so the prompt stops counting as
 * prefill work in the router's load model ({@link io.affinityrouter.RequestLease#markFirstToken()}).
 * Thread-safe as the response it decorates.
 */
final class FirstTokenResponse extends ServerHttpResponseDecorator {
  private final ServerWebExchange exchange;

  FirstTokenResponse(ServerHttpResponse delegate, ServerWebExchange exchange) {
    super(delegate);
    this.exchange = exchange;
  }

  @Override
  public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
    return super.writeWith(Flux.from(body).doOnNext(b -> markFirstToken()));
  }

  @Override
  public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
    return super.writeAndFlushWith(
        Flux.from(body).map(chunk -> Flux.from(chunk).doOnNext(b -> markFirstToken())));
  }

  private void markFirstToken() {
    Object d = exchange.getAttribute(AffinityLoadBalancer.DECISION_ATTR);
    if (d instanceof RoutingDecision decision && decision.isRouted()) {
      decision.lease().markFirstToken();
    }
  }
}
