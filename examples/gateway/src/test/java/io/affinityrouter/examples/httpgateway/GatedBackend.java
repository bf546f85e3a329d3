package io.affinityrouter.examples.httpgateway;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.affinityrouter.examples.fakevllm.FakeVllmConfig;
import io.affinityrouter.examples.fakevllm.FakeVllmServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A backend whose completions wait at a gate the test opens: a stream sends its first event, then
 * waits; a whole answer waits before anything. Everything else ({@code /metrics},
 * {@code /v1/models}) is a fake vLLM's, so the gateway scrapes it as a healthy replica serving
 * {@link TestFleet#MODEL}. One thread per request (the test's, not the gateway's).
 */
final class GatedBackend implements AutoCloseable {
  private static final AtomicInteger THREADS = new AtomicInteger();
  private static final byte[] EVENT = ("data: {\"object\":\"chat.completion.chunk\",\"choices\":"
      + "[{\"index\":0,\"delta\":{\"content\":\"tok \"}}]}\n\n").getBytes(StandardCharsets.UTF_8);
  private static final byte[] DONE = "data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8);
  private static final byte[] WHOLE = ("{\"object\":\"chat.completion\",\"choices\":[{\"index\":0,"
      + "\"message\":{\"role\":\"assistant\",\"content\":\"tok tok\"},\"finish_reason\":\"stop\"}],"
      + "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}")
      .getBytes(StandardCharsets.UTF_8);

  private final FakeVllmServer fake;
  private final HttpServer server;
  private final ExecutorService executor;
  private final HttpClient client = HttpClient.newHttpClient();
  private final CountDownLatch gate = new CountDownLatch(1);
  private final AtomicInteger waiting = new AtomicInteger();

  private GatedBackend() {
    fake = FakeVllmServer.start(new InetSocketAddress("127.0.0.1", 0),
        FakeVllmConfig.builder().model(TestFleet.MODEL).latencyScale(0).build());
    try {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 1024);
    } catch (IOException e) {
      fake.close();
      throw new UncheckedIOException(e);
    }
    executor = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "gated-backend-" + THREADS.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    server.createContext("/v1/chat/completions", this::complete);
    server.createContext("/", this::relay);
    server.setExecutor(executor);
    server.start();
  }

  static GatedBackend start() {
    return new GatedBackend();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** Completions waiting at the gate (a stream once its first event is sent). */
  int waiting() {
    return waiting.get();
  }

  /** Lets every waiting completion, and every later one, finish. */
  void open() {
    gate.countDown();
  }

  private void complete(HttpExchange ex) throws IOException {
    try {
      String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      boolean stream = body.contains("\"stream\":true");
      ex.getResponseHeaders().set("Content-Type", stream ? "text/event-stream" : "application/json");
      OutputStream out = ex.getResponseBody();
      if (stream) {
        ex.sendResponseHeaders(200, 0);
        out.write(EVENT);
        out.flush();
      }
      waiting.incrementAndGet();
      try {
        gate.await(120, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } finally {
        waiting.decrementAndGet();
      }
      if (stream) {
        out.write(EVENT);
        out.write(DONE);
      } else {
        ex.sendResponseHeaders(200, WHOLE.length);
        out.write(WHOLE);
      }
    } finally {
      ex.close();
    }
  }

  private void relay(HttpExchange ex) throws IOException {
    try {
      HttpResponse<byte[]> r;
      try {
        r = client.send(HttpRequest.newBuilder(URI.create(fake.baseUrl()
            + ex.getRequestURI())).build(), HttpResponse.BodyHandlers.ofByteArray());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        ex.sendResponseHeaders(503, -1);
        return;
      }
      r.headers().firstValue("Content-Type")
          .ifPresent(v -> ex.getResponseHeaders().set("Content-Type", v));
      ex.sendResponseHeaders(r.statusCode(), r.body().length == 0 ? -1 : r.body().length);
      ex.getResponseBody().write(r.body());
    } finally {
      ex.close();
    }
  }

  @Override
  public void close() {
    open();
    server.stop(0);
    executor.shutdownNow();
    fake.close();
  }
}
