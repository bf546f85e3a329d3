package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.examples.micrometer.ProxyMeters;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * One request being answered: writes to the client, answers errors in OpenAI's shape
 * ({@link ApiError}, logged by {@link FailureLog} and counted), and ends exactly once, completing
 * the server's callback and running {@code onEnd}. Used by one thread at a time (the request's
 * steps hand it on); {@link #end} is safe from any thread.
 */
final class Exchange {
  final Request request;
  final Response response;
  private final Callback callback;
  private final ProxyMeters meters;
  private final Runnable onEnd;
  private final AtomicBoolean ended = new AtomicBoolean();
  private final long beginNanos = System.nanoTime();
  volatile String session;
  volatile String replica;
  volatile String reason;

  Exchange(Request request, Response response, Callback callback, ProxyMeters meters,
      Runnable onEnd) {
    this.request = request;
    this.response = response;
    this.callback = callback;
    this.meters = meters;
    this.onEnd = onEnd;
  }

  /**
   * Answers {@code error} (or, once the answer has started, cuts it) and ends. Logs one line and
   * counts it as rejected (a gateway error) unless it is an upstream one already counted.
   */
  void fail(ApiError error) {
    if (ended.get()) {
      return;
    }
    log(error.status(), error.code(), error.message());
    meters.rejected(error.status(), error.code());
    if (response.isCommitted()) {
      end(new IOException(error.message()));
      return;
    }
    try {
      response.setStatus(error.status());
      if (error.retryAfterSeconds() > 0) {
        response.getHeaders().put("Retry-After", Long.toString(error.retryAfterSeconds()));
      }
      byte[] body = error.body();
      response.getHeaders().put("Content-Type", "application/json");
      response.getHeaders().put("Content-Length", Long.toString(body.length));
      response.write(true, ByteBuffer.wrap(body), Callback.from(() -> end(null), this::end));
    } catch (Throwable t) {
      end(t);
    }
  }

  /** Logs a failed request whose answer came from the backend (already written). */
  void log(int status, String code, String message) {
    FailureLog.failed(status, code, request.getMethod(), request.getHttpURI().getPath(), replica,
        reason, session, Request.getRemoteAddr(request), System.nanoTime() - beginNanos, message);
  }

  /** Ends the exchange: {@code null} for a complete answer, else why it was cut. Idempotent. */
  void end(Throwable failure) {
    if (ended.compareAndSet(false, true)) {
      try {
        onEnd.run();
      } finally {
        if (failure == null) {
          callback.succeeded();
        } else {
          callback.failed(failure);
        }
      }
    }
  }
}
