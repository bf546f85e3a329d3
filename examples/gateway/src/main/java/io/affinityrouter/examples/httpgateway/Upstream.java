package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.RoutingDecision;
import io.affinityrouter.examples.micrometer.ProxyMeters;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.util.Callback;

/**
 * Sends one routed request to its backend with the JDK's client and relays the answer to the
 * client (a stream piece by piece, each written as it comes), feeding the lease: first token,
 * output tokens ({@link OutputTokenCounter}: the backend's usage, else one per streamed chunk with
 * text).
 *
 * <p>Non-blocking: no thread waits on the backend or on the client. The client's
 * {@code sendAsync} answers when the backend's headers arrive; its body is a
 * {@link Flow.Publisher} asked for one piece at a time, the next only once Jetty has sent the
 * previous one to the client, so a slow client slows the backend's reads instead of filling
 * memory. Thread-safe (stateless but for its client; each request's state is its own).
 */
final class Upstream {
  /** How a proxied request ended, for the caller's bookkeeping. */
  enum Outcome {
    /** Answered (whatever the backend's status), or cut because the client went away. */
    ANSWERED,
    /** The backend refused the connection: the request never reached it, nothing was sent. */
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

  /**
   * Sends {@code call} to the decision's replica and relays its answer.
   *
   * @return completes once the exchange has ended (answered, failed or cut), or with
   *     {@link Outcome#REFUSED} when nothing was sent to the client; exceptionally if a step threw
   *     (the caller then answers {@code 500}, or cuts an answer already started)
   */
  CompletableFuture<Outcome> proxy(Exchange ex, Call call, RoutingDecision decision,
      ProxyHandler.Lease lease, ProxyMeters meters) {
    HttpRequest.Builder b = HttpRequest.newBuilder(
            URI.create(decision.replica().address() + call.path()))
        .timeout(responseTimeout)
        .POST(HttpRequest.BodyPublishers.ofByteArray(call.body()));
    for (RequestHeaders.Header h : call.headers()) {
      b.header(h.name(), h.value());
    }
    Relay relay = new Relay(ex, decision, lease, meters);
    CompletableFuture<HttpResponse<Flow.Publisher<List<ByteBuffer>>>> sent =
        client.sendAsync(b.build(), HttpResponse.BodyHandlers.ofPublisher());
    relay.sent = sent;
    lease.onCut(relay::stopped);
    // a request waiting on its backend is not idle (the response timeout bounds that wait); a write
    // the client does not take still fails at the connection's idle timeout
    ex.request.addIdleTimeoutListener(timeout -> false);
    ex.request.addFailureListener(relay::clientGone);
    sent.whenComplete((response, error) -> {
      try {
        if (error != null) {
          relay.notAnswered(error instanceof CompletionException && error.getCause() != null
              ? error.getCause() : error);
        } else {
          relay.answered(response);
        }
      } catch (Throwable t) {
        relay.done.completeExceptionally(t);
      }
    });
    return relay.done;
  }

  private Outcome failed(Exchange ex, ProxyMeters meters, String replica, ApiError error) {
    backends.markFailed(replica); // before the client hears of it: its next request goes elsewhere
    meters.upstreamError(replica, error.status());
    ex.response.getHeaders().put("x-affinity-replica", replica);
    ex.fail(error);
    return Outcome.FAILED;
  }

  /**
   * One request's relay. Ends once ({@link #finished}): the answer's end, a backend failure, or
   * the client gone (a failed write, or the request failing, from any thread), whichever first.
   */
  private final class Relay implements Flow.Subscriber<List<ByteBuffer>> {
    final CompletableFuture<Outcome> done = new CompletableFuture<>();
    private final Exchange ex;
    private final RoutingDecision decision;
    private final String replica;
    private final ProxyHandler.Lease lease;
    private final ProxyMeters meters;
    private final AtomicBoolean finished = new AtomicBoolean();
    private final OutputTokenCounter tokens = new OutputTokenCounter();
    private final ByteArrayOutputStream whole = new ByteArrayOutputStream();
    volatile CompletableFuture<?> sent;
    private volatile Flow.Subscription subscription;
    private volatile boolean stream;
    private volatile int status;
    private boolean first = true;
    private boolean writing; // guarded by this
    private Runnable afterWrite; // guarded by this: the stream's end, waiting for its last write

    Relay(Exchange ex, RoutingDecision decision, ProxyHandler.Lease lease, ProxyMeters meters) {
      this.ex = ex;
      this.decision = decision;
      this.replica = decision.replica().id();
      this.lease = lease;
      this.meters = meters;
    }

    /** The backend did not answer: refused, timed out, failed, or abandoned for a gone client. */
    void notAnswered(Throwable e) {
      if (!finished.compareAndSet(false, true)) {
        return; // the client went away first: already ended
      }
      if (e instanceof ConnectException || e instanceof HttpConnectTimeoutException) {
        done.complete(Outcome.REFUSED);
      } else if (e instanceof HttpTimeoutException) {
        done.complete(failed(ex, meters, replica, new ApiError(504, "gateway_timeout",
            "backend_timeout", null, "backend " + replica + " sent no response within "
                + responseTimeout.toMillis() + " ms", 0)));
      } else if (e instanceof IOException) {
        done.complete(failed(ex, meters, replica, new ApiError(502, "bad_gateway",
            "backend_failed", null, "backend " + replica + " failed: "
                + e.getClass().getSimpleName(), 0)));
      } else {
        done.completeExceptionally(e);
      }
    }

    /** The backend's headers are in: copied to the answer, then its body is subscribed to. */
    void answered(HttpResponse<Flow.Publisher<List<ByteBuffer>>> response) {
      if (!finished.get()) {
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
        status = response.statusCode();
        if (status >= 400) {
          meters.upstreamError(replica, status);
        }
        stream = type.startsWith("text/event-stream");
        if (stream) {
          ex.response.setStatus(status);
          ex.response.getHeaders().put("Cache-Control", "no-cache");
        }
      }
      response.body().subscribe(this); // also when finished: subscribing is how it is cancelled
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
      subscription = s;
      if (finished.get()) {
        s.cancel();
      } else {
        s.request(stream ? 1 : Long.MAX_VALUE); // a stream: the next piece once this one is sent
      }
    }

    @Override
    public void onNext(List<ByteBuffer> pieces) {
      if (finished.get()) {
        return;
      }
      try {
        int n = 0;
        for (ByteBuffer b : pieces) {
          n += b.remaining();
        }
        byte[] bytes = new byte[n];
        int offset = 0;
        for (ByteBuffer b : pieces) {
          int r = b.remaining();
          b.get(bytes, offset, r);
          offset += r;
        }
        if (!stream) {
          whole.write(bytes, 0, n);
          return;
        }
        if (n == 0) {
          subscription.request(1);
          return;
        }
        if (first) {
          lease.markFirstToken();
          first = false;
        }
        tokens.acceptStream(bytes, 0, n);
        synchronized (this) {
          writing = true;
        }
        ex.response.write(false, ByteBuffer.wrap(bytes), Callback.from(this::written,
            this::clientGone));
      } catch (Throwable t) {
        broken(t);
      }
    }

    /** A stream's piece was sent: the next one, or the end that waited for it. */
    private void written() {
      Runnable end;
      synchronized (this) {
        writing = false;
        end = afterWrite;
        afterWrite = null;
      }
      if (end != null) {
        end.run();
      } else if (!finished.get()) {
        subscription.request(1);
      }
    }

    /** Runs a stream's end once no write is in progress (Jetty takes one write at a time). */
    private void afterWrites(Runnable end) {
      synchronized (this) {
        if (writing) {
          afterWrite = end;
          return;
        }
      }
      end.run();
    }

    @Override
    public void onError(Throwable error) {
      if (stream) {
        afterWrites(this::failedMidStream);
        return;
      }
      if (finished.compareAndSet(false, true)) {
        try {
          ex.response.getHeaders().clear();
          done.complete(failed(ex, meters, replica, new ApiError(502, "bad_gateway",
              "backend_failed", null, "backend " + replica + " failed: "
                  + error.getClass().getSimpleName(), 0)));
        } catch (Throwable t) {
          done.completeExceptionally(t);
        }
      }
    }

    private void failedMidStream() {
      if (!finished.compareAndSet(false, true)) {
        return;
      }
      try {
        lease.close();
        backends.markFailed(replica);
        meters.upstreamError(replica, 502);
        ApiError error = new ApiError(502, "bad_gateway", "backend_failed", null,
            "backend " + replica + " failed mid-stream", 0);
        ex.log(502, error.code(), error.message());
        ex.response.write(true, ByteBuffer.wrap(error.event()), Callback.from(() -> {
          ex.end(null);
          done.complete(Outcome.FAILED);
        }, x -> {
          ex.end(x);
          done.complete(Outcome.FAILED);
        }));
      } catch (Throwable t) {
        done.completeExceptionally(t);
      }
    }

    @Override
    public void onComplete() {
      if (stream) {
        afterWrites(this::streamEnded);
      } else {
        wholeReceived();
      }
    }

    private void streamEnded() {
      if (!finished.compareAndSet(false, true)) {
        return;
      }
      try {
        lease.complete(tokens.outputTokens());
        ex.response.write(true, ByteBuffer.allocate(0), Callback.from(() -> {
          ex.end(null);
          done.complete(Outcome.ANSWERED);
        }, x -> gone(x, "the client went away mid-stream")));
      } catch (Throwable t) {
        done.completeExceptionally(t);
      }
    }

    private void wholeReceived() {
      if (!finished.compareAndSet(false, true)) {
        return;
      }
      try {
        byte[] bytes = whole.toByteArray();
        tokens.acceptBody(bytes);
        if (status == 200) {
          lease.complete(tokens.outputTokens());
        } else {
          lease.close(); // an error answer says nothing of output lengths
          ex.log(status, "upstream_" + status, "backend " + replica + " answered " + status);
        }
        ex.response.setStatus(status);
        ex.response.getHeaders().put("Content-Length", Long.toString(bytes.length));
        ex.response.write(true, ByteBuffer.wrap(bytes), Callback.from(() -> {
          ex.end(null);
          done.complete(Outcome.ANSWERED);
        }, x -> gone(x, "the client went away before the answer was sent")));
      } catch (Throwable t) {
        done.completeExceptionally(t);
      }
    }

    /** The client went away (a write failed, or the request did): the backend is let go. */
    void clientGone(Throwable failure) {
      if (!letGo()) {
        return;
      }
      gone(failure, stream ? "the client went away mid-stream"
          : "the client went away before the answer was sent");
    }

    /** Finishes the relay and lets the backend go, unless it had finished: whether it did. */
    private boolean letGo() {
      if (!finished.compareAndSet(false, true)) {
        return false;
      }
      CompletableFuture<?> s = sent;
      if (s != null) {
        s.cancel(true);
      }
      Flow.Subscription sub = subscription;
      if (sub != null) {
        sub.cancel();
      }
      return true;
    }

    /** The gateway stopped under this request: the backend is let go, the client cut. */
    void stopped() {
      if (!letGo()) {
        return;
      }
      lease.close();
      ex.log(503, "shutting_down", "the gateway stopped before the answer was sent");
      ex.end(new IOException("the gateway stopped"));
      done.complete(Outcome.ANSWERED);
    }

    private void gone(Throwable failure, String message) {
      lease.close();
      ex.log(499, "client_gone", message);
      ex.end(failure);
      done.complete(Outcome.ANSWERED);
    }

    /** A step of the relay threw: the backend is let go, the caller answers or cuts. */
    private void broken(Throwable t) {
      if (finished.compareAndSet(false, true)) {
        Flow.Subscription sub = subscription;
        if (sub != null) {
          sub.cancel();
        }
        done.completeExceptionally(t);
      }
    }
  }
}
