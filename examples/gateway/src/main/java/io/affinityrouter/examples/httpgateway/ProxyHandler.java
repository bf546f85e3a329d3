package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.examples.json.JsonException;
import io.affinityrouter.examples.micrometer.ProxyMeters;
import io.affinityrouter.examples.openai.CompletionRequest;
import io.affinityrouter.examples.openai.Endpoint;
import io.affinityrouter.spi.ChatMessage;
import io.affinityrouter.spi.TokenizeRequest;
import io.affinityrouter.spi.Tokenizer;
import java.net.http.HttpClient;
import java.util.ArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.CompletableFuture;
import java.io.IOException;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The request path of {@code /v1/chat/completions} and {@code /v1/completions}: checks the headers,
 * reads the body (bounded in size and time), routes with {@link Router#selectAsync}, proxies to the
 * chosen backend (a stream chunk by chunk) and closes the lease when the response ends, however it
 * ends.
 *
 * <ul>
 *   <li>Headers: more than {@link GatewayConfig#maxHeaders()} fields, {@code 431}; a control
 *       character (below {@code 0x20} but tab, or {@code 0x7f}) in a value, {@code 400}.
 *   <li>Body: larger than {@value #MAX_BODY_BYTES} bytes (by its {@code Content-Length}, or as a
 *       chunked one is read), {@code 413}; not complete within
 *       {@link GatewayConfig#bodyTimeout()}, {@code 408} (the connection is closed); malformed
 *       JSON or a bad field, {@code 400} with the parser's message (never the prompt).
 *   <li>A model no backend lists: {@code 404} {@code model_not_found}, as vLLM answers it.
 *   <li>Not routed: {@code 429} for {@link RoutingReason#ALL_AT_LIMIT}, {@code 503} otherwise, with
 *       {@code Retry-After} from the decision.
 *   <li>Routed: the backend's answer (headers copied both ways, except hop-by-hop ones) with
 *       {@code x-affinity-replica}, {@code x-affinity-reason} and {@code x-affinity-cached-blocks}
 *       (the prompt's blocks the router found cached on that backend, {@code matched/total}). A
 *       backend that refuses the
 *       connection (the request never reached it) is marked failed and the request routed once
 *       more, which repins its session; any other transport failure marks it failed and answers
 *       {@code 502} ({@code 504} when no response came within
 *       {@link GatewayConfig#responseTimeout()}); mid-stream, the stream ends with an SSE error
 *       event instead of {@code [DONE]}.
 * </ul>
 *
 * <p>Every error answer is in OpenAI's shape ({@link ApiError}) and logged as one line
 * ({@link FailureLog}). Thread-safe: the server's threads check and read; a routing decision is
 * handed to {@code executor} (the server's pool), and proxying holds no thread while it waits on
 * the backend or the client ({@link Upstream}).
 */
final class ProxyHandler {
  /** The largest request body accepted: {@value} bytes. */
  static final int MAX_BODY_BYTES = 16 << 20;
  private static final long FALLBACK_LOG_NANOS = TimeUnit.SECONDS.toNanos(10);
  private static final Logger LOG = LoggerFactory.getLogger(ProxyHandler.class);

  private final Router router;
  private final BackendView backends;
  private final Upstream upstream;
  private final Executor executor;
  private final ProxyMeters meters;
  private final String sessionHeader;
  private final String tenantHeader;
  private final int maxHeaders;
  private final Duration bodyTimeout;
  private final Tokenizer tokenizer; // null: prompts routed on their text
  private final AtomicLong tokenizeFallbacks = new AtomicLong();
  private final AtomicLong lastFallbackLog = new AtomicLong(System.nanoTime() - FALLBACK_LOG_NANOS);
  private final AtomicInteger inFlight = new AtomicInteger();
  private final Set<Lease> open = ConcurrentHashMap.newKeySet();
  private volatile boolean stopped;

  ProxyHandler(Router router, BackendView backends, HttpClient client, Executor executor,
      GatewayConfig config, ProxyMeters meters, Tokenizer tokenizer) {
    this.router = router;
    this.backends = backends;
    this.upstream = new Upstream(client, config.responseTimeout(), backends);
    this.executor = executor;
    this.meters = meters;
    this.sessionHeader = config.sessionHeader();
    this.tenantHeader = config.tenantHeader();
    this.maxHeaders = config.maxHeaders();
    this.bodyTimeout = config.bodyTimeout();
    this.tokenizer = tokenizer;
  }

  /** Requests routed on their text because tokenizing them failed. */
  long tokenizeFallbacks() {
    return tokenizeFallbacks.get();
  }

  /** Requests being served now. */
  int inFlight() {
    return inFlight.get();
  }

  /** Leases not yet released. */
  int openLeases() {
    return open.size();
  }

  /**
   * Cuts every request still relaying and releases its lease: the server has stopped, and a
   * connection it dropped may never tell the relay. Requests routed after this are refused.
   */
  void cutOpen() {
    stopped = true;
    for (Lease lease : open) {
      lease.cut();
    }
  }

  /** Starts serving one request; completes {@code callback} when its answer has been sent. */
  void handle(Request request, Response response, Callback callback, Endpoint endpoint) {
    inFlight.incrementAndGet();
    Exchange ex = new Exchange(request, response, callback, meters, inFlight::decrementAndGet);
    try {
      if (!"POST".equals(request.getMethod())) {
        ex.fail(new ApiError(405, "invalid_request_error", "method_not_allowed", null,
            "method " + request.getMethod() + " (expected: POST)", 0));
        return;
      }
      Optional<ApiError> bad = RequestHeaders.check(request.getHeaders(), maxHeaders);
      if (bad.isPresent()) {
        ex.fail(bad.get());
        return;
      }
      ex.session = request.getHeaders().get(sessionHeader);
      List<RequestHeaders.Header> forwarded = RequestHeaders.forwarded(request.getHeaders());
      long length = request.getLength();
      if (length > MAX_BODY_BYTES) {
        response.getHeaders().put("Connection", "close");
        ex.fail(tooLarge());
        return;
      }
      Content.Source.asByteArrayAsync(request, MAX_BODY_BYTES)
          .orTimeout(bodyTimeout.toMillis(), TimeUnit.MILLISECONDS)
          .whenComplete((body, error) -> {
            try {
              if (error != null) {
                bodyFailed(ex, request, error);
              } else {
                parsed(ex, endpoint, body, forwarded);
              }
            } catch (Throwable t) {
              ex.fail(internal(t));
            }
          });
    } catch (Throwable t) {
      ex.fail(internal(t));
    }
  }

  private void bodyFailed(Exchange ex, Request request, Throwable error) {
    Throwable cause = error instanceof CompletionException && error.getCause() != null
        ? error.getCause() : error;
    ex.response.getHeaders().put("Connection", "close");
    if (cause instanceof TimeoutException) {
      request.fail(cause); // stop reading what is left of the body
      ex.fail(new ApiError(408, "invalid_request_error", "request_timeout", null,
          "body: not received within " + bodyTimeout.toMillis() + " ms", 0));
    } else if (cause instanceof IllegalStateException) {
      // what Jetty 12.1's asByteArrayAsync fails with once a body (chunked: no length) passes maxSize
      ex.fail(tooLarge());
    } else {
      ex.fail(ApiError.badRequest("invalid_body", null,
          "body: could not be read (" + cause.getClass().getSimpleName() + ")"));
    }
  }

  private static ApiError tooLarge() {
    return new ApiError(413, "invalid_request_error", "body_too_large", null,
        "body: more than " + MAX_BODY_BYTES + " bytes (expected: less)", 0);
  }

  private void parsed(Exchange ex, Endpoint endpoint, byte[] body,
      List<RequestHeaders.Header> forwarded) {
    CompletionRequest request;
    RoutingRequest.Builder routing;
    try {
      request = CompletionRequest.parse(endpoint, new String(body, StandardCharsets.UTF_8));
      routing = routingRequest(ex, request);
      routing.build(); // the header fields checked before anything is sent anywhere
    } catch (JsonException e) {
      ex.fail(ApiError.badRequest("invalid_body", null, "malformed request body: "
          + e.getMessage()));
      return;
    } catch (IllegalArgumentException e) {
      ex.fail(ApiError.badRequest("invalid_request", null, e.getMessage()));
      return;
    }
    if (!backends.hasSnapshot()) {
      ex.fail(new ApiError(503, "unavailable", "not_ready", null,
          "no backend has been scraped yet", 1));
      return;
    }
    if (request.model().isPresent() && !Models.served(backends.replicas(), request.model().get())) {
      ex.fail(new ApiError(404, "NotFoundError", "model_not_found", "model",
          "The model `" + request.model().get() + "` does not exist.", 0));
      return;
    }
    Upstream.Call call = new Upstream.Call(endpoint.path(), body, forwarded);
    if (tokenizer == null || request.model().isEmpty()) {
      route(ex, call, routing.build(), false);
      return;
    }
    CompletableFuture<int[]> tokens;
    try {
      tokens = tokenizer.tokenize(tokenizeRequest(request)).toCompletableFuture();
    } catch (RuntimeException e) {
      tokens = CompletableFuture.failedFuture(e);
    }
    tokens.whenComplete((ids, error) -> {
      try {
        if (error == null) {
          routing.promptTokens(ids);
        } else {
          tokenizeFailed(error);
        }
        route(ex, call, routing.build(), false);
      } catch (Throwable t) {
        ex.fail(internal(t));
      }
    });
  }

  private static TokenizeRequest tokenizeRequest(CompletionRequest request) {
    String model = request.model().orElseThrow();
    if (request.endpoint() != Endpoint.CHAT) {
      return TokenizeRequest.completion(model, request.promptText());
    }
    List<ChatMessage> messages = new ArrayList<>(request.messages().size());
    for (CompletionRequest.Message m : request.messages()) {
      messages.add(new ChatMessage(m.role(), m.content()));
    }
    return TokenizeRequest.chat(model, messages);
  }

  /** Counted, and logged at most once per 10 s with the number since the last line. */
  private void tokenizeFailed(Throwable error) {
    long n = tokenizeFallbacks.incrementAndGet();
    long now = System.nanoTime();
    long last = lastFallbackLog.get();
    if (now - last >= FALLBACK_LOG_NANOS && lastFallbackLog.compareAndSet(last, now)) {
      Throwable cause = error instanceof CompletionException && error.getCause() != null
          ? error.getCause() : error;
      LOG.warn("tokenize failed, routed on the prompt's text ({} such requests so far): {}", n,
          cause.getMessage() != null ? cause.getMessage() : cause.getClass().getSimpleName());
    }
  }

  private RoutingRequest.Builder routingRequest(Exchange ex, CompletionRequest request) {
    RoutingRequest.Builder b = RoutingRequest.builder().promptText(request.promptText());
    request.model().ifPresent(b::model);
    request.maxTokens().ifPresent(b::expectedOutputTokens);
    if (ex.session != null) {
      b.sessionId(ex.session);
    }
    String tenant = ex.request.getHeaders().get(tenantHeader);
    if (tenant != null) {
      b.tenant(tenant);
    }
    b.retriesHeader(ex.request.getHeaders().get(RoutingRequest.RETRY_COUNT_HEADER));
    return b;
  }

  private void route(Exchange ex, Upstream.Call call, RoutingRequest routing, boolean retried) {
    long start = System.nanoTime();
    CompletableFuture<RoutingDecision> selected =
        router.selectAsync(routing, backends.replicas()).toCompletableFuture();
    boolean held = !selected.isDone();
    if (held) { // a client that leaves while held leaves the queue
      ex.request.addFailureListener(failure -> selected.cancel(false));
    }
    selected.whenComplete((decision, error) -> {
      String tenant = routing.tenant().orElse(null);
      if (held) {
        meters.holdEnded(selected.isCancelled() ? "cancelled"
            : decision != null && decision.isRouted() ? "admitted" : "refused", tenant,
            Duration.ofNanos(System.nanoTime() - start));
      }
      if (selected.isCancelled()) {
        ex.end(new IOException("the client went away while its request was held"));
        return;
      }
      if (decision != null && !decision.isRouted()) {
        meters.refused(decision.reason().name(), tenant);
      }
      try {
        executor.execute(() -> decided(ex, call, routing, decision, error, retried));
      } catch (RejectedExecutionException e) {
        if (decision != null && decision.isRouted()) {
          decision.lease().close();
        }
        ex.fail(new ApiError(503, "unavailable", "shutting_down", null,
            "the gateway is shutting down", 1));
      }
    });
  }

  private void decided(Exchange ex, Upstream.Call call, RoutingRequest routing,
      RoutingDecision decision, Throwable error, boolean retried) {
    if (error != null) {
      ex.fail(internal(error));
      return;
    }
    if (!decision.isRouted()) {
      ex.reason = decision.reason().name();
      boolean atLimit = decision.reason() == RoutingReason.ALL_AT_LIMIT;
      ex.response.getHeaders().put("x-affinity-reason", decision.reason().name());
      ex.fail(new ApiError(atLimit ? 429 : 503, atLimit ? "rate_limit_exceeded" : "unavailable",
          decision.reason().name().toLowerCase(Locale.ROOT), null,
          "not routed: " + decision.explain(),
          Math.max(1, (decision.retryAfter().toMillis() + 999) / 1000)));
      return;
    }
    Lease lease = new Lease(decision);
    if (stopped) { // registered before this read: cutOpen() either saw it or it sees stopped here
      lease.close();
      ex.fail(new ApiError(503, "unavailable", "shutting_down", null,
          "the gateway is shutting down", 1));
      return;
    }
    CompletableFuture<Upstream.Outcome> proxied;
    try {
      ex.replica = decision.replica().id();
      ex.reason = decision.reason().name();
      proxied = upstream.proxy(ex, call, decision, lease, meters);
    } catch (Throwable t) {
      lease.close();
      ex.fail(internal(t));
      return;
    }
    proxied.whenComplete((outcome, failure) -> {
      try {
        if (failure != null) {
          ex.fail(internal(failure));
        } else if (outcome == Upstream.Outcome.REFUSED) {
          lease.close();
          backends.markFailed(ex.replica);
          if (!retried) {
            route(ex, call, routing, true); // it never reached the backend: safe to route again
            return;
          }
          meters.upstreamError(ex.replica, 502);
          ex.response.getHeaders().put("x-affinity-replica", ex.replica);
          ex.fail(new ApiError(502, "bad_gateway", "backend_refused", null,
              "backend " + ex.replica + " refused the connection", 0));
        }
      } catch (Throwable t) {
        ex.fail(internal(t));
      } finally {
        lease.close(); // a no-op after complete(); on every other path, the release
      }
    });
  }

  private static ApiError internal(Throwable t) {
    if (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return new ApiError(500, "internal_error", "internal_error", null,
        "internal error: " + t.getClass().getSimpleName(), 0);
  }

  /** A routed request's lease, in {@link #open} until released, exactly once. */
  final class Lease {
    private final RoutingDecision decision;
    private final AtomicBoolean released = new AtomicBoolean();
    private volatile Runnable onCut;

    Lease(RoutingDecision decision) {
      this.decision = decision;
      open.add(this);
      meters.leaseOpened(decision.replica().id());
    }

    /** What ends this request's relay when the gateway stops under it. */
    void onCut(Runnable cut) {
      onCut = cut;
    }

    private void cut() {
      Runnable c = onCut;
      try {
        if (c != null) {
          c.run();
        }
      } catch (Throwable t) {
        LOG.debug("cutting a request at shutdown", t);
      } finally {
        close();
      }
    }

    void markFirstToken() {
      decision.lease().markFirstToken();
    }

    void complete(int outputTokens) {
      if (released.compareAndSet(false, true)) {
        try {
          decision.lease().complete(outputTokens);
        } finally {
          released();
        }
      }
    }

    void close() {
      if (released.compareAndSet(false, true)) {
        try {
          decision.lease().close();
        } finally {
          released();
        }
      }
    }

    private void released() {
      open.remove(this);
      meters.leaseClosed(decision.replica().id());
    }
  }
}
