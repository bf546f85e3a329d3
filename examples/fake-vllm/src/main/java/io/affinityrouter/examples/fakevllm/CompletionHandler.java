package io.affinityrouter.examples.fakevllm;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.affinityrouter.examples.json.Json;
import io.affinityrouter.examples.json.JsonException;
import io.affinityrouter.examples.openai.CompletionRequest;
import io.affinityrouter.examples.openai.Endpoint;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Serves {@code POST /v1/chat/completions} and {@code POST /v1/completions} as vLLM's
 * OpenAI-compatible server does, for the fields a router cares about: the response (whole, or
 * streamed as server-sent events chunk by chunk, with a final usage chunk when
 * {@code stream_options.include_usage} is set), {@code usage} with
 * {@code prompt_tokens_details.cached_tokens}, and errors as {@code {"object":"error",...}}.
 *
 * <p>The request waits for its prefill time before the first token, then one decode step per token.
 * A client that disconnects mid-stream aborts the generation (its slot is freed). Thread-safe.
 */
final class CompletionHandler implements HttpHandler {
  private static final AtomicLong IDS = new AtomicLong();

  private final FakeEngine engine;
  private final Endpoint endpoint;

  CompletionHandler(FakeEngine engine, Endpoint endpoint) {
    this.engine = engine;
    this.endpoint = endpoint;
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      if (!"POST".equals(exchange.getRequestMethod())) {
        FakeVllmServer.sendError(exchange, 405, "MethodNotAllowed",
            "method " + exchange.getRequestMethod() + " (expected: POST)");
        return;
      }
      if (engine.config().apiKey().isPresent() && !("Bearer " + engine.config().apiKey().get())
          .equals(exchange.getRequestHeaders().getFirst("Authorization"))) {
        exchange.getRequestBody().readAllBytes();
        FakeVllmServer.sendError(exchange, 401, "Unauthorized", "Unauthorized");
        return;
      }
      CompletionRequest request;
      try {
        String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        request = CompletionRequest.parse(endpoint, body);
      } catch (JsonException e) {
        FakeVllmServer.sendError(exchange, 400, "BadRequestError", e.getMessage());
        return;
      }
      String model = engine.config().model();
      if (request.model().isPresent() && !request.model().get().equals(model)) {
        FakeVllmServer.sendError(exchange, 404, "NotFoundError",
            "The model `" + request.model().get() + "` does not exist.");
        return;
      }
      if (engine.isSleeping()) {
        FakeVllmServer.sendError(exchange, 503, "ServiceUnavailableError",
            "the engine is sleeping; POST /wake_up first");
        return;
      }
      FakeEngine.Generation g;
      try {
        g = engine.start(request);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      boolean completed = false;
      try {
        String id = (endpoint == Endpoint.CHAT ? "chatcmpl-" : "cmpl-") + IDS.incrementAndGet();
        long created = System.currentTimeMillis() / 1000;
        if (request.stream()) {
          stream(exchange, request, g, id, created);
        } else {
          whole(exchange, g, id, created);
        }
        completed = true;
      } catch (IOException e) {
        // The client went away: abort the generation, as vLLM does.
      } finally {
        g.finish(completed);
      }
    }
  }

  private void whole(HttpExchange exchange, FakeEngine.Generation g, String id, long created)
      throws IOException {
    long start = System.nanoTime();
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < g.outputTokens; i++) {
      text.append(g.token(i));
      g.emitted();
    }
    parkUntil(start + g.prefillNanos + g.outputTokens * g.decodeNanosPerToken);
    Map<String, Object> choice = new LinkedHashMap<>();
    choice.put("index", 0);
    if (endpoint == Endpoint.CHAT) {
      choice.put("message", Map.of("role", "assistant", "content", text.toString()));
    } else {
      choice.put("text", text.toString());
    }
    choice.put("finish_reason", "length");
    Map<String, Object> body = envelope(id, endpoint.objectName(), created);
    body.put("choices", List.of(choice));
    body.put("usage", usage(g));
    byte[] bytes = Json.write(body).getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(200, bytes.length);
    exchange.getResponseBody().write(bytes);
  }

  private void stream(HttpExchange exchange, CompletionRequest request, FakeEngine.Generation g,
      String id, long created) throws IOException {
    long start = System.nanoTime();
    exchange.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
    exchange.getResponseHeaders().set("Cache-Control", "no-cache");
    exchange.sendResponseHeaders(200, 0);
    OutputStream out = exchange.getResponseBody();
    String object = endpoint == Endpoint.CHAT ? "chat.completion.chunk" : "text_completion";
    parkUntil(start + g.prefillNanos);
    if (endpoint == Endpoint.CHAT) {
      event(out, chunk(id, object, created, Map.of("role", "assistant", "content", ""), null));
    }
    long firstToken = System.nanoTime();
    for (int i = 0; i < g.outputTokens; i++) {
      parkUntil(firstToken + (i + 1) * g.decodeNanosPerToken);
      String token = g.token(i);
      Object delta = endpoint == Endpoint.CHAT ? Map.of("content", token) : token;
      String finish = i == g.outputTokens - 1 ? "length" : null;
      event(out, chunk(id, object, created, delta, finish));
      g.emitted();
    }
    if (request.includeUsage()) {
      Map<String, Object> last = envelope(id, object, created);
      last.put("choices", List.of());
      last.put("usage", usage(g));
      event(out, Json.write(last));
    }
    out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
    out.flush();
  }

  private String chunk(String id, String object, long created, Object delta, String finish) {
    Map<String, Object> choice = new LinkedHashMap<>();
    choice.put("index", 0);
    choice.put(endpoint == Endpoint.CHAT ? "delta" : "text", delta);
    choice.put("finish_reason", finish);
    Map<String, Object> body = envelope(id, object, created);
    body.put("choices", List.of(choice));
    return Json.write(body);
  }

  private Map<String, Object> envelope(String id, String object, long created) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("id", id);
    body.put("object", object);
    body.put("created", created);
    body.put("model", engine.config().model());
    return body;
  }

  private static Map<String, Object> usage(FakeEngine.Generation g) {
    Map<String, Object> usage = new LinkedHashMap<>();
    usage.put("prompt_tokens", g.promptTokens);
    usage.put("completion_tokens", g.outputTokens);
    usage.put("total_tokens", g.promptTokens + g.outputTokens);
    usage.put("prompt_tokens_details", Map.of("cached_tokens", g.cachedTokens));
    return usage;
  }

  private static void event(OutputStream out, String json) throws IOException {
    out.write(("data: " + json + "\n\n").getBytes(StandardCharsets.UTF_8));
    out.flush();
  }

  private static void parkUntil(long deadlineNanos) {
    long left;
    while ((left = deadlineNanos - System.nanoTime()) > 0) {
      LockSupport.parkNanos(left);
      if (Thread.currentThread().isInterrupted()) {
        return;
      }
    }
  }
}
