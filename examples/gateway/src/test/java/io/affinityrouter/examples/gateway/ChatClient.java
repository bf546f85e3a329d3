package io.affinityrouter.examples.gateway;

import io.affinityrouter.examples.json.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A test client: posts completion requests to a gateway and keeps multi-turn conversations. */
final class ChatClient {
  final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  /** One response as the client saw it. */
  record Reply(int status, String replica, String reason, String body, HttpHeaders headers) {}

  Reply post(String gatewayUrl, String path, String sessionId, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(gatewayUrl + path))
        .timeout(Duration.ofSeconds(20))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (sessionId != null) {
      b.header(GatewayConfig.DEFAULT_SESSION_HEADER, sessionId);
    }
    HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    return new Reply(r.statusCode(), r.headers().firstValue("x-affinity-replica").orElse(null),
        r.headers().firstValue("x-affinity-reason").orElse(null), r.body(), r.headers());
  }

  /** A multi-turn chat: a long shared system prompt, then alternating user and assistant turns. */
  static final class Conversation {
    final String sessionId;
    private final List<Map<String, Object>> messages = new ArrayList<>();
    private int turn;

    Conversation(String sessionId, String systemPrompt) {
      this.sessionId = sessionId;
      messages.add(Map.of("role", "system", "content", systemPrompt));
    }

    /** The next turn's request body: the history plus a new user message. */
    String next(int maxTokens, boolean stream) {
      turn++;
      messages.add(Map.of("role", "user", "content", "Turn " + turn + " of " + sessionId
          + ": please continue the analysis with more detail on item " + turn + "."));
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("model", TestFleet.MODEL);
      body.put("messages", List.copyOf(messages));
      body.put("max_tokens", maxTokens);
      body.put("stream", stream);
      return Json.write(body);
    }

    /** Records the assistant's answer to the last turn. */
    void answered(String content) {
      messages.add(Map.of("role", "assistant", "content", content));
    }

    /** Records the assistant's answer read from a non-streamed response body. */
    void answeredFrom(String responseBody) {
      Map<?, ?> choice = (Map<?, ?>) ((List<?>) Json.parseObject(responseBody).get("choices"))
          .get(0);
      answered((String) ((Map<?, ?>) choice.get("message")).get("content"));
    }
  }

  /** A system prompt of about {@code chars} characters, different per seed. */
  static String systemPrompt(int seed, int chars) {
    StringBuilder sb = new StringBuilder("You are agent " + seed + ". ");
    while (sb.length() < chars) {
      sb.append("Rule ").append(sb.length() % 97).append(": answer with care. ");
    }
    return sb.toString();
  }
}
