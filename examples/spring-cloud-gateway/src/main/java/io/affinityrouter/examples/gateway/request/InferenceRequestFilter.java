package io.affinityrouter.examples.gateway.request;

import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.examples.gateway.loadbalancer.AffinityLoadBalancer;
import io.affinityrouter.spi.TokenizeRequest;
import io.affinityrouter.spi.Tokenizer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.springframework.cloud.gateway.filter.GatewayFilterChain;
import org.springframework.cloud.gateway.filter.GlobalFilter;
import org.springframework.cloud.gateway.filter.ReactiveLoadBalancerClientFilter;
import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.core.Ordered;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The gateway side of affinity routing, for every route to an {@code lb://} service. Before the
 * load balancer runs it caches the request body, builds the {@link RoutingRequest}
 * ({@link RoutingRequestFactory}) and replaces its prompt by block hashes ({@link Router#prehash})
 * for {@link AffinityLoadBalancer}. Around the rest of the chain it:
 *
 * <ul>
 *   <li>answers a request the router did not route with {@code 429 Too Many Requests}
 *       ({@link RoutingReason#ALL_AT_LIMIT}) or {@code 503 Service Unavailable} (no replica for the
 *       model, model waking or loading), each with {@code Retry-After} in whole seconds and an
 *       OpenAI-style error body;
 *   <li>answers a session id longer than 256 bytes with {@code 400}.
 * </ul>
 *
 * <p>Leases are ended by {@link LeaseClosingFilter}, outside the response-writing filter: the chain
 * from here on completes when the upstream headers arrive, before a streamed body is written.
 *
 * <p>With a {@link Tokenizer}, a chat or text completion naming a model is routed on the token ids
 * the engine computes for it (its chat template included), which meet the engines' KV-cache
 * events; tokenization runs off the event loop, and a request it fails for is routed on its text
 * (counted, {@link #tokenizeFallbacks()}, and logged at most once per 10 s, without the text).
 *
 * <p>Runs just before Spring Cloud Gateway's {@link ReactiveLoadBalancerClientFilter}. Never logs
 * the body. Thread-safe.
 */
public final class InferenceRequestFilter implements GlobalFilter, Ordered, AutoCloseable {
  /** This filter's order: just before the load balancer client filter. */
  public static final int ORDER =
      ReactiveLoadBalancerClientFilter.LOAD_BALANCER_CLIENT_FILTER_ORDER - 1;

  private static final System.Logger LOG = System.getLogger(InferenceRequestFilter.class.getName());
  private static final long FALLBACK_LOG_NANOS = 10_000_000_000L;

  private final Router router;
  private final RoutingRequestFactory requests;
  private final @Nullable Tokenizer tokenizer;
  private final boolean ownsTokenizer;
  private final AtomicLong tokenizeFallbacks = new AtomicLong();
  private final AtomicLong lastFallbackLog = new AtomicLong(System.nanoTime() - FALLBACK_LOG_NANOS);

  /** Creates the filter; prompts are routed on their text. */
  public InferenceRequestFilter(Router router, RoutingRequestFactory requests) {
    this(router, requests, null);
  }

  /** Creates the filter; with a {@code tokenizer}, prompts are routed on the engine's ids. */
  public InferenceRequestFilter(Router router, RoutingRequestFactory requests,
      @Nullable Tokenizer tokenizer) {
    this(router, requests, tokenizer, false);
  }

  /** As above; {@code ownsTokenizer}: {@link #close} closes it. */
  public InferenceRequestFilter(Router router, RoutingRequestFactory requests,
      @Nullable Tokenizer tokenizer, boolean ownsTokenizer) {
    this.router = Objects.requireNonNull(router, "router");
    this.requests = Objects.requireNonNull(requests, "requests");
    this.tokenizer = tokenizer;
    this.ownsTokenizer = ownsTokenizer;
  }

  /** Closes the tokenizer if this filter owns it. */
  @Override
  public void close() {
    if (ownsTokenizer && tokenizer != null) {
      tokenizer.close();
    }
  }

  /** Requests routed on their text because their tokenization failed, so far. */
  public long tokenizeFallbacks() {
    return tokenizeFallbacks.get();
  }

  @Override
  public int getOrder() {
    return ORDER;
  }

  /** Prepares the routing request, then maps the outcome as described above. */
  @Override
  public Mono<Void> filter(ServerWebExchange exchange, GatewayFilterChain chain) {
    URI url = exchange.getAttribute(ServerWebExchangeUtils.GATEWAY_REQUEST_URL_ATTR);
    if (url == null || !"lb".equals(url.getScheme())) {
      return chain.filter(exchange);
    }
    return ServerWebExchangeUtils.cacheRequestBodyAndRequest(exchange, cached -> {
      DataBuffer body = exchange.getAttribute(ServerWebExchangeUtils.CACHED_REQUEST_BODY_ATTR);
      HttpHeaders headers = exchange.getRequest().getHeaders();
      RoutingRequest text;
      try {
        text = requests.from(headers, body);
      } catch (IllegalArgumentException e) {
        return reject(exchange.getResponse(), HttpStatus.BAD_REQUEST, null, e.getMessage(),
            "invalid_request_error", "invalid_session_id");
      }
      Tokenizer t = tokenizer;
      Optional<TokenizeRequest> tokenize =
          t == null ? Optional.empty() : requests.tokenizeRequest(body);
      Mono<RoutingRequest> request = tokenize.isEmpty() ? Mono.just(text)
          : Mono.fromFuture(() -> t.tokenize(tokenize.get()))
              .subscribeOn(Schedulers.boundedElastic())
              .map(ids -> requests.fromTokens(headers, tokenize.get().model(), ids))
              .onErrorResume(e -> {
                tokenizeFailed(e);
                return Mono.just(text);
              });
      return request.flatMap(r -> {
        exchange.getAttributes().put(AffinityLoadBalancer.ROUTING_REQUEST_ATTR, router.prehash(r));
        return chain.filter(exchange.mutate().request(cached).build())
            .onErrorResume(e -> notRouted(exchange) != null,
                e -> answerNotRouted(exchange.getResponse(),
                    Objects.requireNonNull(notRouted(exchange))));
      });
    });
  }

  private void tokenizeFailed(Throwable error) {
    long n = tokenizeFallbacks.incrementAndGet();
    long now = System.nanoTime();
    long last = lastFallbackLog.get();
    if (now - last >= FALLBACK_LOG_NANOS && lastFallbackLog.compareAndSet(last, now)) {
      Throwable cause = error instanceof CompletionException && error.getCause() != null
          ? error.getCause() : error;
      LOG.log(System.Logger.Level.WARNING, "tokenize failed, routed on the prompt's text ({0} such"
          + " requests so far): {1}", n, cause.getMessage() != null ? cause.getMessage()
          : cause.getClass().getSimpleName());
    }
  }

  private static @Nullable RoutingDecision notRouted(ServerWebExchange exchange) {
    Object d = exchange.getAttribute(AffinityLoadBalancer.DECISION_ATTR);
    return d instanceof RoutingDecision decision && !decision.isRouted() ? decision : null;
  }

  private static Mono<Void> answerNotRouted(ServerHttpResponse response, RoutingDecision decision) {
    HttpStatus status = decision.reason() == RoutingReason.ALL_AT_LIMIT
        ? HttpStatus.TOO_MANY_REQUESTS : HttpStatus.SERVICE_UNAVAILABLE;
    long millis = decision.retryAfter().toMillis();
    long seconds = Math.max(1, (millis + 999) / 1000);
    String code = decision.reason().name().toLowerCase(Locale.ROOT);
    String message = switch (decision.reason()) {
      case ALL_AT_LIMIT -> "every replica is at its in-flight limit";
      case MODEL_WAKING -> "the model is asleep; a replica was asked to wake it";
      case MODEL_LOADING -> "the model is loading";
      default -> "no replica serves this model now";
    };
    return reject(response, status, seconds, message,
        status == HttpStatus.TOO_MANY_REQUESTS ? "rate_limit_error" : "service_unavailable",
        code);
  }

  private static Mono<Void> reject(ServerHttpResponse response, HttpStatus status,
      @Nullable Long retryAfterSeconds, @Nullable String message, String type, String code) {
    if (response.isCommitted()) {
      return Mono.empty();
    }
    response.setStatusCode(status);
    HttpHeaders headers = response.getHeaders();
    headers.setContentType(MediaType.APPLICATION_JSON);
    if (retryAfterSeconds != null) {
      headers.set(HttpHeaders.RETRY_AFTER, Long.toString(retryAfterSeconds));
    }
    String json = "{\"error\":{\"message\":\"" + jsonEscape(message == null ? "" : message)
        + "\",\"type\":\"" + type + "\",\"code\":\"" + code + "\"}}";
    DataBuffer buffer = response.bufferFactory().wrap(json.getBytes(StandardCharsets.UTF_8));
    return response.writeWith(Mono.just(buffer));
  }

  private static String jsonEscape(String s) {
    StringBuilder sb = new StringBuilder(s.length() + 8);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c < 0x20) {
        sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }
}
