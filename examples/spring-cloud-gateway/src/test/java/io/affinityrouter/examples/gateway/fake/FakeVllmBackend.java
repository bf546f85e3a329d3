package io.affinityrouter.examples.gateway.fake;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A stand-in for one vLLM OpenAI server on 127.0.0.1: {@code POST /v1/chat/completions} and
 * {@code /v1/completions} answer an OpenAI-shaped completion naming this backend (streamed as
 * server-sent events when the body asks {@code "stream":true}), and
 * {@code GET /metrics} serves the captured vLLM v0.26.0 (V1 engine) exposition in
 * {@code shared/fixtures/metrics/} (read by path, not copied) with this backend's model and live
 * figures written into its families, plus the {@code num_requests_running} and
 * {@code generation_tokens_total} families the capture was trimmed of.
 *
 * <p>Records the session header and body of every completion it serves. {@link #hold()} makes completions
 * wait until {@link #release()}, to keep requests in flight. Thread-safe.
 */
public final class FakeVllmBackend implements AutoCloseable {
  /**
   * The captured exposition: {@code shared/} is beside the project root, so this is
   * {@code ../shared/...} from the root (where {@code mvn -pl ... exec:java} runs) and
   * {@code ../../../shared/...} from this module (where surefire runs).
   */
  public static final Path CAPTURE = locate(
      "shared/fixtures/metrics/vllm-v1-0.26.0-llmd-router-none.prom");
  /** The model name in the capture, replaced by the backend's. */
  static final String CAPTURED_MODEL = "Qwen/Qwen3-0.6B";
  /** Output tokens each completion claims to have generated. */
  static final int COMPLETION_TOKENS = 7;

  private final String name;
  private final String model;
  private final String capture;
  private final HttpServer server;
  private final ExecutorService executor;
  private final List<String> servedSessions = new CopyOnWriteArrayList<>();
  private final List<String> servedBodies = new CopyOnWriteArrayList<>();
  private final AtomicInteger running = new AtomicInteger();
  private final AtomicInteger arrived = new AtomicInteger();
  private final AtomicLong generated = new AtomicLong();
  private final AtomicLong prompt = new AtomicLong();
  private volatile CountDownLatch gate = new CountDownLatch(0);

  /**
   * Starts a backend.
   *
   * @param name the name its answers carry
   * @param model the model it serves ({@code model_name} in its metrics)
   * @param port the port, 0 for any free one
   */
  public FakeVllmBackend(String name, String model, int port) throws IOException {
    this.name = name;
    this.model = model;
    this.capture = Files.readString(CAPTURE, StandardCharsets.UTF_8);
    this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 64);
    this.executor = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "fake-vllm-" + name);
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(executor);
    server.createContext("/v1/chat/completions", this::complete);
    server.createContext("/v1/completions", this::complete);
    server.createContext("/metrics", this::metrics);
    server.start();
  }

  /** The backend's name. */
  public String name() {
    return name;
  }

  /** The port it listens on. */
  public int port() {
    return server.getAddress().getPort();
  }

  /** Its base URI. */
  public URI uri() {
    return URI.create("http://127.0.0.1:" + port());
  }

  /** The session header of each completion served (or that arrived while held), in order. */
  public List<String> servedSessions() {
    return List.copyOf(servedSessions);
  }

  /** The body of each completion served (or held), in the order of {@link #servedSessions()}. */
  public List<String> servedBodies() {
    return List.copyOf(servedBodies);
  }

  /** Completions that have arrived, held or not. */
  public int arrived() {
    return arrived.get();
  }

  /** Makes completions wait until {@link #release()}. */
  public void hold() {
    gate = new CountDownLatch(1);
  }

  /** Lets held completions (and later ones) answer. */
  public void release() {
    gate.countDown();
  }

  private void complete(HttpExchange exchange) throws IOException {
    try (exchange) {
      byte[] body;
      try (InputStream in = exchange.getRequestBody()) {
        body = in.readAllBytes();
      }
      String session = exchange.getRequestHeaders().getFirst("x-session-id");
      servedBodies.add(new String(body, StandardCharsets.UTF_8));
      servedSessions.add(session == null ? "" : session);
      arrived.incrementAndGet();
      running.incrementAndGet();
      try {
        if (new String(body, StandardCharsets.UTF_8).contains("\"stream\":true")) {
          stream(exchange);
          return;
        }
        if (!gate.await(30, TimeUnit.SECONDS)) {
          exchange.sendResponseHeaders(504, -1);
          return;
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } finally {
        running.decrementAndGet();
      }
      int promptTokens = (body.length + 3) / 4;
      prompt.addAndGet(promptTokens);
      generated.addAndGet(COMPLETION_TOKENS);
      String json = String.format(Locale.ROOT, "{\"id\":\"cmpl-%s-%d\",\"object\":\"chat.completion\","
          + "\"model\":\"%s\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
          + "\"content\":\"served by %s\"},\"finish_reason\":\"stop\"}],\"usage\":{"
          + "\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d}}",
          name, arrived.get(), model, name, promptTokens, COMPLETION_TOKENS,
          promptTokens + COMPLETION_TOKENS);
      send(exchange, 200, "application/json", json);
    }
  }

  /**
   * Streams a completion as server-sent events: the first token at once, the rest when the gate
   * opens (so a held stream is in the middle of its generation).
   */
  private void stream(HttpExchange exchange) throws IOException, InterruptedException {
    exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
    exchange.sendResponseHeaders(200, 0);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(chunk("served").getBytes(StandardCharsets.UTF_8));
      out.flush();
      if (!gate.await(30, TimeUnit.SECONDS)) {
        return;
      }
      out.write((chunk(" by " + name) + "data: [DONE]\n\n").getBytes(StandardCharsets.UTF_8));
      generated.addAndGet(COMPLETION_TOKENS);
    } catch (IOException e) {
      // the gateway went away mid-stream
    }
  }

  private String chunk(String text) {
    return "data: {\"object\":\"chat.completion.chunk\",\"model\":\"" + model
        + "\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + text + "\"}}]}\n\n";
  }

  private void metrics(HttpExchange exchange) throws IOException {
    try (exchange) {
      exchange.getRequestBody().readAllBytes();
      send(exchange, 200, "text/plain; version=0.0.4; charset=utf-8", exposition());
    }
  }

  /** The capture with this backend's model and figures. */
  String exposition() {
    int now = running.get();
    StringBuilder sb = new StringBuilder(capture.length() + 512);
    for (String line : capture.split("\n", -1)) {
      String l = line.replace(CAPTURED_MODEL, model);
      if (l.startsWith("vllm:kv_cache_usage_perc{")) {
        l = withValue(l, Math.min(1.0, now * 0.01));
      } else if (l.startsWith("vllm:num_requests_waiting{")) {
        l = withValue(l, 0);
      }
      sb.append(l).append('\n');
    }
    String labels = "{engine=\"0\",model_name=\"" + model + "\"}";
    sb.append("# HELP vllm:num_requests_running Number of requests in model execution batches.\n")
        .append("# TYPE vllm:num_requests_running gauge\n")
        .append("vllm:num_requests_running").append(labels).append(' ').append(now).append(".0\n")
        .append("# HELP vllm:generation_tokens_total Number of generation tokens processed.\n")
        .append("# TYPE vllm:generation_tokens_total counter\n")
        .append("vllm:generation_tokens_total").append(labels).append(' ')
        .append(generated.get()).append(".0\n")
        .append("# HELP vllm:prompt_tokens_total Number of prefill tokens processed.\n")
        .append("# TYPE vllm:prompt_tokens_total counter\n")
        .append("vllm:prompt_tokens_total").append(labels).append(' ')
        .append(prompt.get()).append(".0\n");
    return sb.toString();
  }

  private static String withValue(String sampleLine, double value) {
    int space = sampleLine.lastIndexOf(' ');
    return sampleLine.substring(0, space + 1) + value;
  }

  private static void send(HttpExchange exchange, int status, String type, String text)
      throws IOException {
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", type);
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    } catch (IOException e) {
      // the gateway went away (a cancelled request): nothing to answer to
    }
  }

  /** Stops listening (connections are refused from now on) and lets held requests go. */
  @Override
  public void close() {
    release();
    server.stop(0);
    executor.shutdownNow();
  }

  private static Path locate(String beside) {
    Path fromModule = Path.of("../../..").resolve(beside);
    Path fromRoot = Path.of("..").resolve(beside);
    return Files.isRegularFile(fromModule) || !Files.isRegularFile(fromRoot) ? fromModule : fromRoot;
  }

  @Override
  public String toString() {
    return name + "@" + port();
  }
}
