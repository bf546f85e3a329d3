package io.affinityrouter.examples.openai;

import io.affinityrouter.examples.json.Json;
import io.affinityrouter.examples.json.JsonException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * The parts of an OpenAI-compatible {@code /v1/chat/completions} or {@code /v1/completions} request
 * body that a router and a fake engine need: model, the prompt rendered as one text, whether to
 * stream, the output limit.
 *
 * <p>A chat prompt is rendered as {@code "<|role|>\ncontent\n"} per message, so a conversation's
 * next turn renders to an extension of the previous turn's text (what makes prefix caching work).
 * {@link #toString()} shows sizes only, never prompt content. Immutable and thread-safe.
 */
public final class CompletionRequest {
  /** The largest {@code max_tokens} accepted: {@value}. */
  public static final int MAX_OUTPUT_TOKENS = 1 << 20;

  private final Endpoint endpoint;
  private final String model;
  private final String promptText;
  private final List<Message> messages;
  private final boolean stream;
  private final boolean includeUsage;
  private final int maxTokens;

  private CompletionRequest(Endpoint endpoint, String model, String promptText,
      List<Message> messages, boolean stream, boolean includeUsage, int maxTokens) {
    this.endpoint = endpoint;
    this.model = model;
    this.promptText = promptText;
    this.messages = messages;
    this.stream = stream;
    this.includeUsage = includeUsage;
    this.maxTokens = maxTokens;
  }

  /**
   * Reads a request body.
   *
   * @param endpoint which API the body was posted to
   * @param body the body
   * @return the request
   * @throws JsonException if the body is not JSON, or lacks or mistypes a field this API needs; the
   *     message names the field and never quotes the prompt
   */
  public static CompletionRequest parse(Endpoint endpoint, String body) {
    Map<String, Object> json = Json.parseObject(body);
    String model = optionalString(json, "model");
    List<Message> messages = endpoint == Endpoint.CHAT ? messages(json.get("messages")) : List.of();
    String prompt = endpoint == Endpoint.CHAT ? render(messages) : renderPrompt(json.get("prompt"));
    boolean stream = optionalBoolean(json, "stream");
    boolean includeUsage = false;
    Object options = json.get("stream_options");
    if (options instanceof Map) {
      includeUsage = optionalBoolean((Map<?, ?>) options, "include_usage");
    } else if (options != null && options != Json.NULL) {
      throw fieldError("stream_options", options, "an object");
    }
    int maxTokens = 0;
    Object max = json.containsKey("max_completion_tokens") ? json.get("max_completion_tokens")
        : json.get("max_tokens");
    if (max != null && max != Json.NULL) {
      if (!(max instanceof Long) || (Long) max < 1 || (Long) max > MAX_OUTPUT_TOKENS) {
        throw new JsonException("max_tokens: " + Json.write(max)
            + " (expected: an integer in 1.." + MAX_OUTPUT_TOKENS + ")");
      }
      maxTokens = (int) (long) (Long) max;
    }
    return new CompletionRequest(endpoint, model, prompt, messages, stream, includeUsage,
        maxTokens);
  }

  /** The API the request was posted to. */
  public Endpoint endpoint() {
    return endpoint;
  }

  /** The {@code model} field, if given. */
  public Optional<String> model() {
    return Optional.ofNullable(model);
  }

  /** The prompt as one text (chat messages rendered in order). Never log it. */
  public String promptText() {
    return promptText;
  }

  /**
   * A chat request's messages in order, each content's text parts joined; empty for a completion.
   * Never log them.
   */
  public List<Message> messages() {
    return messages;
  }

  /** Whether the response is streamed as server-sent events. */
  public boolean stream() {
    return stream;
  }

  /** Whether a streamed response ends with a usage chunk ({@code stream_options.include_usage}). */
  public boolean includeUsage() {
    return includeUsage;
  }

  /** {@code max_tokens} (or {@code max_completion_tokens}), if given. */
  public OptionalInt maxTokens() {
    return maxTokens == 0 ? OptionalInt.empty() : OptionalInt.of(maxTokens);
  }

  @Override
  public String toString() {
    return "CompletionRequest{" + endpoint + ", model=" + model + ", promptChars="
        + promptText.length() + ", stream=" + stream + ", maxTokens=" + maxTokens + '}';
  }

  private static List<Message> messages(Object messages) {
    if (!(messages instanceof List) || ((List<?>) messages).isEmpty()) {
      throw fieldError("messages", messages, "a non-empty array of {role, content}");
    }
    List<?> list = (List<?>) messages;
    List<Message> out = new ArrayList<>(list.size());
    for (int i = 0; i < list.size(); i++) {
      if (!(list.get(i) instanceof Map)) {
        throw fieldError("messages[" + i + "]", list.get(i), "an object");
      }
      Map<?, ?> m = (Map<?, ?>) list.get(i);
      Object role = m.get("role");
      if (!(role instanceof String)) {
        throw fieldError("messages[" + i + "].role", role, "a string");
      }
      StringBuilder content = new StringBuilder();
      appendContent(content, m.get("content"), "messages[" + i + "].content");
      out.add(new Message((String) role, content.toString()));
    }
    return List.copyOf(out);
  }

  private static String render(List<Message> messages) {
    StringBuilder sb = new StringBuilder();
    for (Message m : messages) {
      sb.append("<|").append(m.role()).append("|>\n").append(m.content()).append('\n');
    }
    return sb.toString();
  }

  private static void appendContent(StringBuilder sb, Object content, String field) {
    if (content instanceof String) {
      sb.append((String) content);
    } else if (content instanceof List) {
      List<?> parts = (List<?>) content;
      for (int j = 0; j < parts.size(); j++) {
        Object part = parts.get(j);
        Object text = part instanceof Map ? ((Map<?, ?>) part).get("text") : null;
        if (text instanceof String) {
          sb.append((String) text);
        } else if (!(part instanceof Map)) {
          throw fieldError(field + "[" + j + "]", part, "an object");
        }
      }
    } else if (content != null && content != Json.NULL) {
      throw fieldError(field, content, "a string or an array of parts");
    }
  }

  private static String renderPrompt(Object prompt) {
    if (prompt instanceof String) {
      return (String) prompt;
    }
    if (prompt instanceof List && !((List<?>) prompt).isEmpty()) {
      StringBuilder sb = new StringBuilder();
      for (Object p : (List<?>) prompt) {
        if (!(p instanceof String)) {
          throw fieldError("prompt", prompt,
              "a string or an array of strings (token-id prompts are not supported here)");
        }
        sb.append((String) p).append('\n');
      }
      return sb.toString();
    }
    throw fieldError("prompt", prompt, "a string or a non-empty array of strings");
  }

  private static String optionalString(Map<String, Object> json, String field) {
    Object v = json.get(field);
    if (v == null || v == Json.NULL) {
      return null;
    }
    if (!(v instanceof String) || ((String) v).isBlank()) {
      throw fieldError(field, v, "a non-blank string");
    }
    return (String) v;
  }

  private static boolean optionalBoolean(Map<?, ?> json, String field) {
    Object v = json.get(field);
    if (v == null || v == Json.NULL) {
      return false;
    }
    if (!(v instanceof Boolean)) {
      throw fieldError(field, v, "a boolean");
    }
    return (Boolean) v;
  }

  /** One chat message: its role and its text. {@link #toString()} shows the size only. */
  public record Message(String role, String content) {
    @Override
    public String toString() {
      return "Message{" + role + ", chars=" + content.length() + '}';
    }
  }

  /** A message naming the field and the type found, never its content. */
  private static JsonException fieldError(String field, Object value, String expected) {
    String found = value == null ? "missing" : "a JSON " + Json.typeName(value);
    return new JsonException(field + ": " + found + " (expected: " + expected + ")");
  }
}
