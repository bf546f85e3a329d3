package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.examples.json.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One multi-turn chat as a client keeps it: a system prompt, then alternating user and assistant
 * messages; each turn's request carries the whole history, so it extends the previous turn's
 * prompt (what a session's prefix cache is for). Used by the {@link LoadDriver} and the tests.
 *
 * <p>Not thread-safe: one conversation, one client thread.
 */
final class Conversation {
  private final String sessionId;
  private final String model;
  private final List<Map<String, Object>> messages = new ArrayList<>();
  private int turn;

  /** A conversation for {@code model} (null: no model field) that starts with a system prompt. */
  Conversation(String sessionId, String model, String systemPrompt) {
    this.sessionId = sessionId;
    this.model = model;
    messages.add(Map.of("role", "system", "content", systemPrompt));
  }

  /** The session id (what the client sends in the session header). */
  String sessionId() {
    return sessionId;
  }

  /** The next turn's request body: the history plus a new user message. */
  String next(int maxTokens, boolean stream) {
    turn++;
    messages.add(Map.of("role", "user", "content", "Turn " + turn + " of " + sessionId
        + ": please continue the analysis with more detail on item " + turn + "."));
    Map<String, Object> body = new LinkedHashMap<>();
    if (model != null) {
      body.put("model", model);
    }
    body.put("messages", List.copyOf(messages));
    body.put("max_tokens", maxTokens);
    body.put("stream", stream);
    return Json.write(body);
  }

  /** Records the assistant's answer to the last turn. */
  void answered(String content) {
    messages.add(Map.of("role", "assistant", "content", content));
  }

  /**
   * Records the assistant's answer read from a non-streamed chat response body.
   *
   * @throws IllegalArgumentException if the body is not a chat completion
   */
  void answeredFrom(String responseBody) {
    Object choices = Json.parseObject(responseBody).get("choices");
    if (!(choices instanceof List) || ((List<?>) choices).isEmpty()
        || !(((List<?>) choices).get(0) instanceof Map)) {
      throw new IllegalArgumentException("choices: missing (expected: a chat completion)");
    }
    Object message = ((Map<?, ?>) ((List<?>) choices).get(0)).get("message");
    Object content = message instanceof Map ? ((Map<?, ?>) message).get("content") : null;
    answered(content instanceof String ? (String) content : "");
  }

  /** A system prompt of at least {@code chars} characters, different per seed. */
  static String systemPrompt(int seed, int chars) {
    StringBuilder sb = new StringBuilder("You are agent " + seed + ". ");
    while (sb.length() < chars) {
      sb.append("Rule ").append(sb.length() % 97).append(": answer with care. ");
    }
    return sb.toString();
  }
}
