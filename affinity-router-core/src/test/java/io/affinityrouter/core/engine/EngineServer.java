package io.affinityrouter.core.engine;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A real HTTP server on 127.0.0.1 standing in for an engine: each path answers what the test set
 * (status, body, or a hold until {@link #release()}), and every request is recorded.
 */
final class EngineServer implements AutoCloseable {
  /** The captured expositions, read in place (see shared/fixtures/metrics/README.txt). */
  static final String VLLM_V1 = "vllm-v1-0.26.0-llmd-router-none.prom";
  static final String VLLM_V0 = "vllm-v0-aibrix-runtime-doc.prom";
  static final String SGLANG = "sglang-docs-production-metrics.prom";

  /** One answer. */
  record Answer(int status, String body, boolean hold, String location) {
    static Answer ok(String body) {
      return new Answer(200, body, false, null);
    }

    static Answer status(int status) {
      return new Answer(status, "error", false, null);
    }

    static Answer held() {
      return new Answer(200, "", true, null);
    }

    /** A redirect ({@code status} 301, 302, 307 or 308) to {@code location}. */
    static Answer redirect(int status, String location) {
      return new Answer(status, "", false, location);
    }
  }

  /** One request received. */
  record Received(String method, String path, String query) {}

  private final HttpServer server;
  private final ExecutorService executor = Executors.newCachedThreadPool();
  private final Map<String, Answer> answers = new ConcurrentHashMap<>();
  final List<Received> received = new CopyOnWriteArrayList<>();
  /** Every request's body, in the order received (UTF-8). */
  final List<String> bodies = new CopyOnWriteArrayList<>();
  private volatile CountDownLatch hold = new CountDownLatch(1);

  EngineServer() {
    try {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    server.createContext("/", this::handle);
    server.setExecutor(executor);
    server.start();
  }

  static String fixture(String name) {
    Path path = Path.of("../../shared/fixtures/metrics").resolve(name);
    assertThat(path).as("fixture %s", path.toAbsolutePath().normalize()).isRegularFile();
    try {
      return Files.readString(path, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A base URL nothing listens on (connections are refused). */
  static URI refusingUri() {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return URI.create("http://127.0.0.1:" + s.getLocalPort());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  URI uri() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  EngineServer answer(String path, Answer answer) {
    answers.put(path, answer);
    return this;
  }

  EngineServer metrics(String body) {
    return answer("/metrics", Answer.ok(body));
  }

  /** Lets every held request answer (200, empty body), and holds none from now on. */
  void release() {
    hold.countDown();
  }

  long count(String path) {
    return received.stream().filter(r -> r.path().equals(path)).count();
  }

  private void handle(HttpExchange ex) throws IOException {
    URI u = ex.getRequestURI();
    received.add(new Received(ex.getRequestMethod(), u.getPath(), u.getRawQuery()));
    bodies.add(new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
    Answer a = answers.getOrDefault(u.getPath(), Answer.status(404));
    if (a.hold()) {
      try {
        hold.await(60, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      Answer now = answers.get(u.getPath());
      if (now != null && !now.hold()) {
        a = now; // what the test set meanwhile
      }
    }
    byte[] body = a.body().getBytes(StandardCharsets.UTF_8);
    if (a.location() != null) {
      ex.getResponseHeaders().set("Location", a.location());
    }
    try {
      ex.sendResponseHeaders(a.status(), body.length == 0 ? -1 : body.length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(body);
      }
    } catch (IOException e) {
      // the client gave up (a timed-out scrape)
    } finally {
      ex.close();
    }
  }

  @Override
  public void close() {
    release();
    server.stop(0);
    executor.shutdownNow();
  }

  /** Polls {@code condition} until it holds or 10 s pass (time is not the subject). */
  static void await(String what, BooleanSupplier condition) {
    await(what, 10, condition);
  }

  /** Polls {@code condition} until it holds or {@code seconds} pass. */
  static void await(String what, int seconds, BooleanSupplier condition) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out waiting for " + what);
      }
      java.util.concurrent.locks.LockSupport.parkNanos(5_000_000); // the poll interval
    }
  }
}
