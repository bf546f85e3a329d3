package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.core.lifecycle.LifecycleState;
import io.affinityrouter.examples.json.Json;
import io.affinityrouter.examples.openai.Endpoint;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The gateway's routes: the completion endpoints go to the {@link ProxyHandler}; besides them,
 * {@code GET /v1/models} (the backends' models, {@link Models}), {@code GET /metrics} (the
 * gateway's meters in Prometheus text), {@code GET /health/live} (200 while the process serves),
 * {@code GET /health/ready} and {@code GET /health} (200 once the backend view has a first
 * snapshot and the gateway is not shutting down, else 503; with model claims, also the
 * lifecycle's state: whether this gateway leads, and each claimed model's copies). Anything else
 * is a JSON {@code 404}. Thread-safe.
 */
final class AdminRoutes extends Handler.Abstract {
  private final ProxyHandler proxy;
  private final HeaderDeadline deadline;
  private final BackendView backends;
  private final PrometheusMeterRegistry registry;
  private final BooleanSupplier closing;
  private final Supplier<LifecycleState> lifecycle; // null without claims
  private final long createdEpochSeconds = System.currentTimeMillis() / 1000;

  AdminRoutes(ProxyHandler proxy, HeaderDeadline deadline, BackendView backends,
      PrometheusMeterRegistry registry, BooleanSupplier closing,
      Supplier<LifecycleState> lifecycle) {
    this.proxy = proxy;
    this.deadline = deadline;
    this.backends = backends;
    this.registry = registry;
    this.closing = closing;
    this.lifecycle = lifecycle;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    // Headers are in: from here the body has its own timeout, and the next request starts afresh.
    Connection connection = request.getConnectionMetaData().getConnection();
    deadline.requestStarted(connection);
    return route(request, response, Callback.from(() -> {
      deadline.requestEnded(connection);
      callback.succeeded();
    }, failure -> {
      deadline.requestEnded(connection);
      callback.failed(failure);
    }));
  }

  private boolean route(Request request, Response response, Callback callback) {
    String path = request.getHttpURI().getPath();
    Optional<Endpoint> endpoint = Endpoint.forPath(path == null ? "" : path);
    if (endpoint.isPresent()) {
      proxy.handle(request, response, callback, endpoint.get());
      return true;
    }
    if (!"GET".equals(request.getMethod()) && !"HEAD".equals(request.getMethod())
        && isAdmin(path)) {
      return error(response, callback, new ApiError(405, "invalid_request_error",
          "method_not_allowed", null, "method " + request.getMethod() + " (expected: GET)", 0));
    }
    switch (path == null ? "" : path) {
      case "/v1/models":
        return send(response, callback, 200, "application/json",
            Models.list(backends.replicas(), createdEpochSeconds));
      case "/metrics":
        return send(response, callback, 200, "text/plain; version=0.0.4; charset=utf-8",
            registry.scrape().getBytes(StandardCharsets.UTF_8));
      case "/health/live":
        return send(response, callback, 200, "application/json",
            "{\"status\":\"live\"}".getBytes(StandardCharsets.UTF_8));
      case "/health":
      case "/health/ready":
        return ready(response, callback);
      default:
        ApiError notFound = new ApiError(404, "NotFoundError", "not_found", null,
            "no route for " + path, 0);
        FailureLog.failed(404, notFound.code(), request.getMethod(), path, null, null, null,
            Request.getRemoteAddr(request), 0, notFound.message());
        return error(response, callback, notFound);
    }
  }

  private static boolean isAdmin(String path) {
    return "/v1/models".equals(path) || "/metrics".equals(path)
        || (path != null && path.startsWith("/health"));
  }

  private boolean ready(Response response, Callback callback) {
    boolean snapshot = backends.hasSnapshot();
    boolean ready = snapshot && !closing.getAsBoolean();
    long healthy = backends.replicas().stream()
        .filter(r -> r.health() == ReplicaHealth.HEALTHY).count();
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("status", ready ? "ready" : closing.getAsBoolean() ? "shutting_down" : "starting");
    body.put("backends", (long) backends.replicas().size());
    body.put("healthy_backends", healthy);
    if (lifecycle != null) {
      body.put("lifecycle", lifecycle(lifecycle.get()));
    }
    return send(response, callback, ready ? 200 : 503, "application/json",
        Json.write(body).getBytes(StandardCharsets.UTF_8));
  }

  /**
   * {@code {"leader":true,"actions_in_flight":0,"models":{"m":{"awake":1,"asleep":1,"waking":0,
   * "min_awake":1,"max_awake":4}}}} ({@code max_awake} absent when unbounded).
   */
  private static Map<String, Object> lifecycle(LifecycleState state) {
    Map<String, Object> models = new LinkedHashMap<>();
    for (LifecycleState.ModelStatus m : state.models()) {
      Map<String, Object> model = new LinkedHashMap<>();
      model.put("awake", (long) m.awake());
      model.put("asleep", (long) m.asleep());
      model.put("waking", (long) m.waking());
      model.put("min_awake", (long) m.minAwake());
      if (m.maxAwake() != Integer.MAX_VALUE) {
        model.put("max_awake", (long) m.maxAwake());
      }
      models.put(m.model(), model);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("leader", state.leader());
    out.put("actions_in_flight", (long) state.inFlight().size());
    out.put("models", models);
    return out;
  }

  private static boolean error(Response response, Callback callback, ApiError error) {
    return send(response, callback, error.status(), "application/json", error.body());
  }

  private static boolean send(Response response, Callback callback, int status, String type,
      byte[] body) {
    response.setStatus(status);
    response.getHeaders().put("Content-Type", type);
    response.getHeaders().put("Content-Length", Long.toString(body.length));
    response.write(true, ByteBuffer.wrap(body), callback);
    return true;
  }
}
