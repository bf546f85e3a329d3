package io.affinityrouter.examples.httpgateway;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.affinityrouter.RequestLease;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.engine.FleetView;
import io.affinityrouter.examples.json.Json;
import io.affinityrouter.examples.json.JsonException;
import io.affinityrouter.examples.openai.CompletionRequest;
import io.affinityrouter.examples.openai.Endpoint;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The request path: reads an OpenAI-compatible completion request, routes it with
 * {@link Router#selectAsync}, proxies it to the chosen backend (a stream chunk by chunk) and closes
 * the {@link RequestLease} when the response ends, however it ends.
 *
 * <ul>
 *   <li>Malformed JSON or a bad field: {@code 400} with the parser's message (never the prompt).
 *   <li>Not routed: {@code 429} for {@link RoutingReason#ALL_AT_LIMIT}, {@code 503} otherwise, with
 *       {@code Retry-After} from the decision.
 *   <li>Routed: the backend's answer (headers copied both ways, except hop-by-hop ones) with
 *       {@code x-affinity-replica} and {@code x-affinity-reason}.
 *       If the backend refuses the connection (the request never reached it), it is marked
 *       unhealthy and the request is routed once more, which repins its session. Any other
 *       transport failure marks it unhealthy and answers {@code 502} ({@code 504} when no response
 *       came within {@link GatewayConfig#responseTimeout()}); mid-stream, the stream ends with an
 *       SSE error event instead of {@code [DONE]}.
 *   <li>Streams: {@code markFirstToken()} on the first chunk; a client that disconnects aborts the
 *       upstream request and releases the lease.
 * </ul>
 *
 * <p>Thread-safe. The server's threads read and route; the proxying runs on {@code proxyExecutor}.
 */
final class ProxyHandler implements HttpHandler {
  /** The largest request body accepted: {@value} bytes. */
  static final int MAX_BODY_BYTES = 16 << 20;
  /**
   * Headers not copied between client and backend: hop-by-hop ones (RFC 9110 §7.6.1), those the
   * JDK's client sets itself, and lengths (the proxy frames bodies itself).
   */
  private static final Set<String> NOT_FORWARDED = Set.of("connection", "keep-alive",
      "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer",
      "transfer-encoding", "upgrade", "host", "content-length", "expect", "date");

  private final Router router;
  private final FleetView fleet;
  private final HttpClient client;
  private final Executor proxyExecutor;
  private final String sessionHeader;
  private final String tenantHeader;
  private final java.time.Duration responseTimeout;
  private final AtomicInteger inFlight = new AtomicInteger();
  private final AtomicInteger openLeases = new AtomicInteger();
  private volatile boolean draining;

  ProxyHandler(Router router, FleetView fleet, HttpClient client, Executor proxyExecutor,
      GatewayConfig config) {
    this.router = router;
    this.fleet = fleet;
    this.client = client;
    this.proxyExecutor = proxyExecutor;
    this.sessionHeader = config.sessionHeader();
    this.tenantHeader = config.tenantHeader();
    this.responseTimeout = config.responseTimeout();
  }

  /** Requests being served now. */
  int inFlight() {
    return inFlight.get();
  }

  /** Leases not yet released. */
  int openLeases() {
    return openLeases.get();
  }

  /** From now on, new requests get {@code 503} with {@code Connection: close}. */
  void drain() {
    draining = true;
  }

  @Override
  public void handle(HttpExchange ex) throws IOException {
    inFlight.incrementAndGet();
    Call call = new Call(ex);
    try {
      if (draining) {
        ex.getResponseHeaders().set("Connection", "close");
        call.error(503, "unavailable", "the gateway is shutting down", 1);
        return;
      }
      Optional<Endpoint> endpoint = Endpoint.forPath(ex.getRequestURI().getPath());
      if (endpoint.isEmpty()) {
        call.error(404, "not_found", "no route for " + ex.getRequestURI().getPath(), 0);
        return;
      }
      if (!"POST".equals(ex.getRequestMethod())) {
        call.error(405, "invalid_request_error",
            "method " + ex.getRequestMethod() + " (expected: POST)", 0);
        return;
      }
      byte[] body = ex.getRequestBody().readNBytes(MAX_BODY_BYTES + 1);
      if (body.length > MAX_BODY_BYTES) {
        call.error(413, "invalid_request_error",
            "body: more than " + MAX_BODY_BYTES + " bytes (expected: less)", 0);
        return;
      }
      CompletionRequest request;
      RoutingRequest routing;
      try {
        request = CompletionRequest.parse(endpoint.get(),
            new String(body, StandardCharsets.UTF_8));
        routing = routingRequest(ex, request);
      } catch (JsonException e) {
        call.error(400, "invalid_request_error", "malformed request body: " + e.getMessage(), 0);
        return;
      } catch (IllegalArgumentException e) {
        call.error(400, "invalid_request_error", e.getMessage(), 0);
        return;
      }
      route(call, body, routing, false);
    } catch (IOException | RuntimeException e) {
      call.end();
      throw e;
    }
  }

  private RoutingRequest routingRequest(HttpExchange ex, CompletionRequest request) {
    RoutingRequest.Builder b = RoutingRequest.builder().promptText(request.promptText());
    request.model().ifPresent(b::model);
    request.maxTokens().ifPresent(b::expectedOutputTokens);
    String session = ex.getRequestHeaders().getFirst(sessionHeader);
    if (session != null) {
      b.sessionId(session);
    }
    String tenant = ex.getRequestHeaders().getFirst(tenantHeader);
    if (tenant != null) {
      b.tenant(tenant);
    }
    return b.build();
  }

  private void route(Call call, byte[] body, RoutingRequest routing, boolean retried) {
    router.selectAsync(routing, fleet.replicas()).whenCompleteAsync((decision, error) -> {
      try {
        if (error != null) {
          call.error(500, "internal_error", "routing failed: " + error, 0);
        } else if (!decision.isRouted()) {
          int status = decision.reason() == RoutingReason.ALL_AT_LIMIT ? 429 : 503;
          call.ex.getResponseHeaders().set("x-affinity-reason", decision.reason().name());
          call.error(status, status == 429 ? "rate_limit_exceeded" : "unavailable",
              "not routed: " + decision.explain(),
              Math.max(1, (decision.retryAfter().toMillis() + 999) / 1000));
        } else {
          proxy(call, body, routing, decision, retried);
        }
      } catch (IOException | RuntimeException e) {
        call.end(); // the client is gone, or a bug: free the exchange either way
      }
    }, proxyExecutor);
  }

  private void proxy(Call call, byte[] body, RoutingRequest routing, RoutingDecision decision,
      boolean retried) throws IOException {
    Lease lease = new Lease(decision.lease());
    String replicaId = decision.replica().id();
    HttpExchange ex = call.ex;
    HttpResponse<InputStream> response;
    try {
      HttpRequest.Builder upstream = HttpRequest.newBuilder(
              URI.create(decision.replica().address() + ex.getRequestURI().getPath()))
          .timeout(responseTimeout)
          .POST(HttpRequest.BodyPublishers.ofByteArray(body));
      ex.getRequestHeaders().forEach((name, values) -> {
        if (!NOT_FORWARDED.contains(name.toLowerCase(Locale.ROOT))) {
          values.forEach(v -> upstream.header(name, v));
        }
      });
      response = client.send(upstream.build(), HttpResponse.BodyHandlers.ofInputStream());
    } catch (ConnectException | HttpConnectTimeoutException e) {
      lease.close();
      fleet.reportFailure(replicaId, e);
      if (!retried) {
        route(call, body, routing, true); // it never reached the backend: safe to route again
        return;
      }
      ex.getResponseHeaders().set("x-affinity-replica", replicaId);
      call.error(502, "bad_gateway", "backend " + replicaId + " refused the connection", 0);
      return;
    } catch (HttpTimeoutException e) {
      lease.close();
      fleet.reportFailure(replicaId, e);
      ex.getResponseHeaders().set("x-affinity-replica", replicaId);
      call.error(504, "gateway_timeout", "backend " + replicaId + " sent no response within "
          + responseTimeout.toMillis() + " ms", 0);
      return;
    } catch (IOException e) {
      lease.close();
      fleet.reportFailure(replicaId, e);
      ex.getResponseHeaders().set("x-affinity-replica", replicaId);
      call.error(502, "bad_gateway", "backend " + replicaId + " failed: " + e.getMessage(), 0);
      return;
    } catch (InterruptedException e) {
      lease.close();
      Thread.currentThread().interrupt();
      call.end();
      return;
    }
    try (InputStream in = response.body()) {
      response.headers().map().forEach((name, values) -> {
        if (!NOT_FORWARDED.contains(name.toLowerCase(Locale.ROOT))) {
          ex.getResponseHeaders().put(name, values);
        }
      });
      ex.getResponseHeaders().set("x-affinity-replica", replicaId);
      ex.getResponseHeaders().set("x-affinity-reason", decision.reason().name());
      if (decision.isDegraded()) {
        ex.getResponseHeaders().set("x-affinity-degraded", "true");
      }
      String type = response.headers().firstValue("Content-Type").orElse("application/json");
      ex.getResponseHeaders().set("Content-Type", type);
      if (type.startsWith("text/event-stream")) {
        stream(call, in, lease, replicaId, response.statusCode());
      } else {
        whole(call, in, lease, replicaId, response.statusCode());
      }
    } finally {
      lease.close();
    }
  }

  private void whole(Call call, InputStream in, Lease lease, String replicaId, int status)
      throws IOException {
    byte[] bytes;
    try {
      bytes = in.readAllBytes();
    } catch (IOException e) {
      fleet.reportFailure(replicaId, e);
      call.ex.getResponseHeaders().clear();
      call.ex.getResponseHeaders().set("x-affinity-replica", replicaId);
      call.error(502, "bad_gateway", "backend " + replicaId + " failed: " + e.getMessage(), 0);
      return;
    }
    OutputTokenCounter tokens = new OutputTokenCounter();
    tokens.acceptBody(bytes);
    try {
      call.ex.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
      call.ex.getResponseBody().write(bytes);
    } finally {
      if (status == 200) {
        lease.complete(tokens.outputTokens());
      } else {
        lease.close(); // an error answer says nothing of output lengths
      }
      call.end();
    }
  }

  private void stream(Call call, InputStream in, Lease lease, String replicaId, int status)
      throws IOException {
    OutputTokenCounter tokens = new OutputTokenCounter();
    call.ex.getResponseHeaders().set("Cache-Control", "no-cache");
    call.ex.sendResponseHeaders(status, 0);
    var out = call.ex.getResponseBody();
    byte[] buf = new byte[8192];
    boolean first = true;
    try {
      while (true) {
        int n;
        try {
          n = in.read(buf);
        } catch (IOException e) {
          fleet.reportFailure(replicaId, e);
          lease.close();
          out.write(("data: {\"error\":{\"message\":\"backend " + replicaId
              + " failed mid-stream\",\"type\":\"bad_gateway\",\"code\":502}}\n\n")
              .getBytes(StandardCharsets.UTF_8));
          return;
        }
        if (n < 0) {
          lease.complete(tokens.outputTokens());
          return;
        }
        if (first && n > 0) {
          lease.markFirstToken();
          first = false;
        }
        tokens.acceptStream(buf, 0, n);
        out.write(buf, 0, n); // throws when the client has gone away
        out.flush();
      }
    } finally {
      lease.close(); // the client went away (or the stream ended): release, close upstream
      call.end();
    }
  }

  /** One exchange: answers errors in OpenAI's shape and ends exactly once. */
  private final class Call {
    final HttpExchange ex;
    private final AtomicBoolean ended = new AtomicBoolean();

    Call(HttpExchange ex) {
      this.ex = ex;
    }

    void error(int status, String type, String message, long retryAfterSeconds)
        throws IOException {
      try {
        if (retryAfterSeconds > 0) {
          ex.getResponseHeaders().set("Retry-After", Long.toString(retryAfterSeconds));
        }
        byte[] bytes = Json.write(Map.of("error",
            Map.of("message", message, "type", type, "code", status)))
            .getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, bytes.length);
        ex.getResponseBody().write(bytes);
      } finally {
        end();
      }
    }

    void end() {
      if (ended.compareAndSet(false, true)) {
        try {
          ex.close();
        } finally {
          inFlight.decrementAndGet();
        }
      }
    }
  }

  /** A lease counted in {@link #openLeases} until released, exactly once. */
  private final class Lease {
    private final RequestLease lease;
    private final AtomicBoolean released = new AtomicBoolean();

    Lease(RequestLease lease) {
      this.lease = lease;
      openLeases.incrementAndGet();
    }

    void markFirstToken() {
      lease.markFirstToken();
    }

    void complete(int outputTokens) {
      if (released.compareAndSet(false, true)) {
        lease.complete(outputTokens);
        openLeases.decrementAndGet();
      }
    }

    void close() {
      if (released.compareAndSet(false, true)) {
        lease.close();
        openLeases.decrementAndGet();
      }
    }
  }
}
