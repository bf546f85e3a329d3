package io.affinityrouter.examples.fakevllm;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.affinityrouter.examples.cli.Flags;
import io.affinityrouter.examples.json.Json;
import io.affinityrouter.examples.json.JsonException;
import io.affinityrouter.examples.openai.CompletionRequest;
import io.affinityrouter.examples.openai.Endpoint;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A small HTTP server that behaves like one vLLM replica for a router's purposes.
 *
 * <ul>
 *   <li>{@code POST /v1/chat/completions}, {@code POST /v1/completions}: OpenAI-compatible, plain or
 *       streamed ({@code "stream": true}), with a simulated prefix cache and latency
 *       ({@link FakeVllmConfig});
 *   <li>{@code GET /metrics}: vLLM's Prometheus families, including the prefix-cache query and hit
 *       counters, so a test can read each replica's real hit rate;
 *   <li>{@code POST /sleep?level=1|2[&mode=abort|wait|keep]}, {@code POST /wake_up},
 *       {@code GET /is_sleeping}: model state
 *       (a sleeping engine answers completions with {@code 503});
 *   <li>{@code POST /tokenize}: vLLM's fields and answer ({@code count}, {@code max_model_len},
 *       {@code tokens}), the ids of the model's tokenizer ({@code --tokenizer DIR}), else of this
 *       engine's {@link FakeTokenizer}, for the text its completion
 *       endpoints would compute (a chat's messages rendered as they are for
 *       {@code /v1/chat/completions});
 *   <li>with {@link FakeVllmConfig#kvEvents()}, its prefix cache's changes published as vLLM's
 *       KV-event publisher does (ZMQ PUB and replay, {@link KvEventPublisher}), each stored block
 *       with the token ids of {@code /tokenize};
 *   <li>{@code GET /health}, {@code GET /v1/models}.
 * </ul>
 *
 * <p>Run: {@code java ... FakeVllmServer --port 8001 [--model m] [--latency-scale 1.0]
 * [--num-gpu-blocks 8192] [--block-size 16] [--host 127.0.0.1] [--kv-events-port 5557
 * --kv-events-replay-port 5558] [--tokenizer DIR]}.
 *
 * <p>Thread-safe. {@link #close()} stops it at once, cutting open connections, like a replica that
 * dies; it is idempotent.
 */
public final class FakeVllmServer implements AutoCloseable {
  private static final AtomicInteger THREADS = new AtomicInteger();
  private static final long MAX_MODEL_LEN = 32768;

  private final FakeEngine engine;
  private final HttpServer server;
  private final ExecutorService executor;
  private final KvEventPublisher events; // null: none
  private volatile boolean closed;
  private volatile int tokenizeFault;

  private FakeVllmServer(FakeEngine engine, HttpServer server, ExecutorService executor,
      KvEventPublisher events) {
    this.engine = engine;
    this.server = server;
    this.executor = executor;
    this.events = events;
  }

  /**
   * Starts a server bound to {@code address} (port 0: an ephemeral port).
   *
   * @throws UncheckedIOException if the address cannot be bound
   */
  public static FakeVllmServer start(InetSocketAddress address, FakeVllmConfig config) {
    HttpServer server;
    try {
      server = HttpServer.create(address, 256);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot bind " + address, e);
    }
    KvEventPublisher events = config.kvEvents() ? new KvEventPublisher(
        address.getHostString(), config.kvEventsPort(), config.kvEventsReplayPort()) : null;
    FakeEngine engine = new FakeEngine(config, events);
    ExecutorService executor = Executors.newCachedThreadPool(r -> {
      Thread t = new Thread(r, "fake-vllm-" + THREADS.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    FakeVllmServer s = new FakeVllmServer(engine, server, executor, events);
    for (Endpoint e : Endpoint.values()) {
      server.createContext(e.path(), new CompletionHandler(engine, e));
    }
    server.createContext("/metrics", ex -> s.simple(ex, "GET", () -> {
      byte[] body = MetricsText.render(engine).getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
      ex.sendResponseHeaders(200, body.length);
      ex.getResponseBody().write(body);
    }));
    server.createContext("/sleep", ex -> s.simple(ex, "POST", () -> {
      String query = ex.getRequestURI().getQuery();
      // vLLM reads level (default 1) and mode (default abort) from the query, in any order
      String levelParam = "1";
      String mode = "abort";
      for (String pair : query == null ? new String[0] : query.split("&")) {
        if (pair.startsWith("level=")) {
          levelParam = pair.substring("level=".length());
        } else if (pair.startsWith("mode=")) {
          mode = pair.substring("mode=".length());
        }
      }
      int level;
      try {
        level = Integer.parseInt(levelParam);
      } catch (NumberFormatException e) {
        level = -1;
      }
      if (level != 1 && level != 2) {
        sendError(ex, 400, "BadRequestError", "level: " + query + " (expected: 1 or 2)");
        return;
      }
      if (!mode.equals("abort") && !mode.equals("wait") && !mode.equals("keep")) {
        sendError(ex, 400, "BadRequestError", "mode: " + mode + " (expected: abort, wait or keep)");
        return;
      }
      engine.sleep(level);
      ex.sendResponseHeaders(200, -1);
    }));
    server.createContext("/wake_up", ex -> s.simple(ex, "POST", () -> {
      engine.wakeUp();
      ex.sendResponseHeaders(200, -1);
    }));
    server.createContext("/is_sleeping", ex -> s.simple(ex, "GET",
        () -> sendJson(ex, 200, Map.of("is_sleeping", engine.isSleeping()))));
    server.createContext("/tokenize", ex -> s.tokenize(ex, config));
    server.createContext("/health", ex -> s.simple(ex, "GET",
        () -> ex.sendResponseHeaders(200, -1)));
    server.createContext("/v1/models", ex -> s.simple(ex, "GET", () -> sendJson(ex, 200,
        Map.of("object", "list", "data", List.of(Map.of("id", config.model(), "object", "model",
            "owned_by", "fake-vllm", "max_model_len", MAX_MODEL_LEN))))));
    server.setExecutor(executor);
    server.start();
    return s;
  }

  /** The port the server listens on. */
  public int port() {
    return server.getAddress().getPort();
  }

  /** {@code http://host:port} of the server. */
  public String baseUrl() {
    return "http://" + server.getAddress().getHostString() + ":" + port();
  }

  /** The configuration it runs with. */
  public FakeVllmConfig config() {
    return engine.config();
  }

  /** Where its KV events are published ({@code tcp://host:port}), if they are. */
  public java.util.Optional<String> kvEventsUri() {
    return events == null ? java.util.Optional.empty() : java.util.Optional.of(
        "tcp://" + server.getAddress().getHostString() + ":" + events.port());
  }

  /** Where its KV events are replayed from ({@code tcp://host:port}), if they are published. */
  public java.util.Optional<String> kvEventsReplayUri() {
    return events == null ? java.util.Optional.empty() : java.util.Optional.of(
        "tcp://" + server.getAddress().getHostString() + ":" + events.replayPort());
  }

  /** KV-event batches published so far (0 when it publishes none). */
  public long kvEventBatchesPublished() {
    return events == null ? 0 : events.published();
  }

  /** Requests running now. */
  public int runningRequests() {
    return engine.running();
  }

  /** Requests that ran to the end. */
  public long finishedRequests() {
    return engine.finished();
  }

  /** Requests whose client went away before the end. */
  public long abortedRequests() {
    return engine.aborted();
  }

  /** How many times {@code POST /sleep} put the engine to sleep. */
  public long sleeps() {
    return engine.sleeps();
  }

  /** How many times {@code POST /wake_up} was called. */
  public long wakeUps() {
    return engine.wakeUps();
  }

  /**
   * From now on, {@code POST /tokenize} answers {@code status} (a fault for tests);
   * {@code 0} serves it again.
   *
   * @throws IllegalArgumentException unless {@code status} is 0 or in 400..599
   */
  public void tokenizeFault(int status) {
    if (status != 0 && (status < 400 || status > 599)) {
      throw new IllegalArgumentException("status: " + status + " (expected: 0 or 400..599)");
    }
    tokenizeFault = status;
  }

  /** Whether the engine sleeps. */
  public boolean isSleeping() {
    return engine.isSleeping();
  }

  /** Stops listening and cuts every open connection at once. Idempotent. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    server.stop(0);
    executor.shutdownNow();
    engine.close();
    if (events != null) {
      events.close();
    }
  }

  /** Writes a vLLM-style error body: {@code {"object":"error","message":...,"type":...,"code":...}}. */
  static void sendError(HttpExchange ex, int status, String type, String message)
      throws IOException {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("object", "error");
    body.put("message", message);
    body.put("type", type);
    body.put("param", null);
    body.put("code", status);
    sendJson(ex, status, body);
  }

  private static void sendJson(HttpExchange ex, int status, Object body) throws IOException {
    byte[] bytes = Json.write(body).getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.sendResponseHeaders(status, bytes.length);
    ex.getResponseBody().write(bytes);
  }

  private void simple(HttpExchange ex, String method, IoAction action) throws IOException {
    try (ex) {
      ex.getRequestBody().readAllBytes();
      if (!method.equals(ex.getRequestMethod())) {
        sendError(ex, 405, "MethodNotAllowed",
            "method " + ex.getRequestMethod() + " (expected: " + method + ")");
        return;
      }
      action.run();
    }
  }

  /**
   * vLLM's {@code POST /tokenize}: a body with {@code messages} is a chat, one with {@code prompt}
   * a completion; the ids are those the completion endpoints compute for the same body. This
   * engine adds no special tokens, so {@code add_special_tokens} and
   * {@code add_generation_prompt} change nothing.
   */
  private void tokenize(HttpExchange ex, FakeVllmConfig config) throws IOException {
    try (ex) {
      String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      if (!"POST".equals(ex.getRequestMethod())) {
        sendError(ex, 405, "MethodNotAllowed",
            "method " + ex.getRequestMethod() + " (expected: POST)");
        return;
      }
      CompletionRequest request;
      try {
        request = CompletionRequest.parse(
            Json.parseObject(body).containsKey("messages") ? Endpoint.CHAT : Endpoint.COMPLETIONS,
            body);
      } catch (JsonException e) {
        sendError(ex, 400, "BadRequestError", e.getMessage());
        return;
      }
      if (request.model().isPresent() && !request.model().get().equals(config.model())) {
        sendError(ex, 404, "NotFoundError",
            "The model `" + request.model().get() + "` does not exist.");
        return;
      }
      int fault = tokenizeFault;
      if (fault != 0) {
        sendError(ex, fault, "InternalServerError", "tokenize: injected fault");
        return;
      }
      int[] tokens;
      try {
        tokens = engine.tokens(request);
      } catch (java.util.concurrent.CompletionException e) {
        sendError(ex, 400, "BadRequestError", "tokenize: " + e.getCause().getMessage());
        return;
      }
      Map<String, Object> answer = new LinkedHashMap<>();
      answer.put("count", (long) tokens.length);
      answer.put("max_model_len", MAX_MODEL_LEN);
      List<Long> ids = new java.util.ArrayList<>(tokens.length);
      for (int t : tokens) {
        ids.add((long) t);
      }
      answer.put("tokens", ids);
      answer.put("token_strs", null);
      sendJson(ex, 200, answer);
    }
  }

  @FunctionalInterface
  private interface IoAction {
    void run() throws IOException;
  }

  /**
   * Entry point: starts one fake replica and runs until killed.
   *
   * @throws IllegalArgumentException for bad flags
   */
  public static void main(String[] args) throws InterruptedException {
    Flags f = Flags.parse(args, Set.of("host", "port", "model", "latency-scale",
        "num-gpu-blocks", "block-size", "max-num-seqs", "kv-events-port",
        "kv-events-replay-port", "tokenizer"));
    FakeVllmConfig.Builder b = FakeVllmConfig.builder();
    if (f.has("tokenizer")) {
      b.tokenizerDir(java.nio.file.Path.of(f.string("tokenizer", "")));
    }
    if (f.has("kv-events-port")) {
      b.kvEvents(f.integer("kv-events-port", 0), f.integer("kv-events-replay-port", 0));
    }
    FakeVllmConfig config = b
        .model(f.string("model", FakeVllmConfig.DEFAULT_MODEL))
        .latencyScale(f.number("latency-scale", 1))
        .numGpuBlocks(f.integer("num-gpu-blocks", FakeVllmConfig.DEFAULT_NUM_GPU_BLOCKS))
        .blockSize(f.integer("block-size", FakeVllmConfig.DEFAULT_BLOCK_SIZE))
        .maxNumSeqs(f.integer("max-num-seqs", FakeVllmConfig.DEFAULT_MAX_NUM_SEQS))
        .build();
    FakeVllmServer s = start(new InetSocketAddress(f.string("host", "127.0.0.1"),
        f.integer("port", 8000)), config);
    System.out.println("fake vLLM serving " + config.model() + " at " + s.baseUrl());
    Runtime.getRuntime().addShutdownHook(new Thread(s::close));
    new CountDownLatch(1).await();
  }
}
