package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.RoutingDecision;
import io.affinityrouter.examples.micrometer.ProxyMeters;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * Sends one routed request to its backend with the JDK's client and copies the answer to the
 * client (a stream chunk by chunk, flushed as it comes), feeding the lease: first token, output
 * tokens ({@link OutputTokenCounter}: the backend's usage, else one per streamed chunk with text).
 * Blocking; runs on the gateway's proxy threads. Thread-safe (stateless but for its client).
 */
final class Upstream {
  /** How a proxied request ended, for the caller's bookkeeping. */
  enum Outcome {
    /** Answered (whatever the backend's status), or cut because the client went away. */
    ANSWERED,
    /** The backend refused the connection: the request never reached it. */
    REFUSED,
    /**
     * The backend failed at the transport level: it was marked failed, then the client got
     * 502/504 or an error event.
     */
    FAILED
  }

  /** What to send: the path, the body as received, the headers to forward. */
  record Call(String path, byte[] body, List<RequestHeaders.Header> headers) {}

  private final HttpClient client;
  private final Duration responseTimeout;
  private final BackendView backends;

  Upstream(HttpClient client, Duration responseTimeout, BackendView backends) {
    this.client = client;
    this.responseTimeout = responseTimeout;
    this.backends = backends;
  }

  Outcome proxy(Exchange ex, Call call, RoutingDecision decision, ProxyHandler.Lease lease,
      ProxyMeters meters) throws IOException {
    String replica = decision.replica().id();
    HttpRequest.Builder b = HttpRequest.newBuilder(
            URI.create(decision.replica().address() + call.path()))
        .timeout(responseTimeout)
        .POST(HttpRequest.BodyPublishers.ofByteArray(call.body()));
    for (RequestHeaders.Header h : call.headers()) {
      b.header(h.name(), h.value());
    }
    HttpResponse<InputStream> response;
    try {
      response = client.send(b.build(), HttpResponse.BodyHandlers.ofInputStream());
    } catch (ConnectException | HttpConnectTimeoutException e) {
      return Outcome.REFUSED;
    } catch (HttpTimeoutException e) {
      return failed(ex, meters, replica, new ApiError(504, "gateway_timeout", "backend_timeout",
          null, "backend " + replica + " sent no response within " + responseTimeout.toMillis()
              + " ms", 0));
    } catch (IOException e) {
      return failed(ex, meters, replica, new ApiError(502, "bad_gateway", "backend_failed", null,
          "backend " + replica + " failed: " + e.getClass().getSimpleName(), 0));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      ex.fail(new ApiError(503, "unavailable", "shutting_down", null,
          "the gateway is shutting down", 1));
      return Outcome.ANSWERED;
    }
    try (InputStream in = response.body()) {
      response.headers().map().forEach((name, values) -> {
        if (!RequestHeaders.NOT_FORWARDED.contains(name.toLowerCase(Locale.ROOT))
            && !name.startsWith(":")) {
          values.forEach(v -> ex.response.getHeaders().add(name, v));
        }
      });
      ex.response.getHeaders().put("x-affinity-replica", replica);
      ex.response.getHeaders().put("x-affinity-reason", decision.reason().name());
      // the prompt's blocks the router believed cached on the replica, of all its blocks
      ex.response.getHeaders().put("x-affinity-cached-blocks",
          decision.matchedBlocks() + "/" + decision.promptBlocks());
      if (decision.isDegraded()) {
        ex.response.getHeaders().put("x-affinity-degraded", "true");
      }
      String type = response.headers().firstValue("Content-Type").orElse("application/json");
      ex.response.getHeaders().put("Content-Type", type);
      int status = response.statusCode();
      if (status >= 400) {
        meters.upstreamError(replica, status);
      }
      return type.startsWith("text/event-stream")
          ? stream(ex, in, lease, meters, replica, status)
          : whole(ex, in, lease, meters, replica, status);
    }
  }

  private Outcome failed(Exchange ex, ProxyMeters meters, String replica, ApiError error) {
    backends.markFailed(replica); // before the client hears of it: its next request goes elsewhere
    meters.upstreamError(replica, error.status());
    ex.response.getHeaders().put("x-affinity-replica", replica);
    ex.fail(error);
    return Outcome.FAILED;
  }

  private Outcome whole(Exchange ex, InputStream in, ProxyHandler.Lease lease,
      ProxyMeters meters, String replica, int status) {
    byte[] bytes;
    try {
      bytes = in.readAllBytes();
    } catch (IOException e) {
      ex.response.getHeaders().clear();
      return failed(ex, meters, replica, new ApiError(502, "bad_gateway", "backend_failed", null,
          "backend " + replica + " failed: " + e.getClass().getSimpleName(), 0));
    }
    OutputTokenCounter tokens = new OutputTokenCounter();
    tokens.acceptBody(bytes);
    if (status == 200) {
      lease.complete(tokens.outputTokens());
    } else {
      lease.close(); // an error answer says nothing of output lengths
      ex.log(status, "upstream_" + status, "backend " + replica + " answered " + status);
    }
    ex.response.setStatus(status);
    ex.response.getHeaders().put("Content-Length", Long.toString(bytes.length));
    try {
      ex.write(true, ByteBuffer.wrap(bytes));
      ex.end(null);
    } catch (IOException e) {
      ex.log(499, "client_gone", "the client went away before the answer was sent");
      ex.end(e);
    }
    return Outcome.ANSWERED;
  }

  private Outcome stream(Exchange ex, InputStream in, ProxyHandler.Lease lease,
      ProxyMeters meters, String replica, int status) {
    OutputTokenCounter tokens = new OutputTokenCounter();
    ex.response.setStatus(status);
    ex.response.getHeaders().put("Cache-Control", "no-cache");
    byte[] buf = new byte[8192];
    boolean first = true;
    try {
      while (true) {
        int n;
        try {
          n = in.read(buf);
        } catch (IOException e) {
          lease.close();
          backends.markFailed(replica);
          meters.upstreamError(replica, 502);
          ApiError error = new ApiError(502, "bad_gateway", "backend_failed", null,
              "backend " + replica + " failed mid-stream", 0);
          ex.log(502, error.code(), error.message());
          ex.write(true, ByteBuffer.wrap(error.event()));
          ex.end(null);
          return Outcome.FAILED;
        }
        if (n < 0) {
          lease.complete(tokens.outputTokens());
          ex.write(true, ByteBuffer.allocate(0));
          ex.end(null);
          return Outcome.ANSWERED;
        }
        if (first && n > 0) {
          lease.markFirstToken();
          first = false;
        }
        tokens.acceptStream(buf, 0, n);
        ex.write(false, ByteBuffer.wrap(buf, 0, n)); // throws when the client has gone away
      }
    } catch (IOException e) {
      lease.close(); // the client went away: release; closing the body aborts the upstream
      ex.log(499, "client_gone", "the client went away mid-stream");
      ex.end(e);
      return Outcome.ANSWERED;
    }
  }
}
