package io.affinityrouter.examples.gateway.request;

import io.affinityrouter.RoutingRequest;
import io.affinityrouter.spi.ChatMessage;
import io.affinityrouter.spi.TokenizeRequest;
import io.affinityrouter.spi.Tokenizer;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Builds a {@link RoutingRequest} from an OpenAI-style inference request: the session and tenant
 * from headers, the model and the prompt from the JSON body.
 *
 * <p>The prompt is what the engine will see first, so that turn {@code n + 1} of a conversation
 * starts with the text of turn {@code n} and shares its prefix blocks:
 *
 * <ul>
 *   <li>{@code /v1/chat/completions}: each message as {@code role + "\n" + content + "\n"}, where
 *       content is a string or the {@code text} of its text parts (images and tool calls are left
 *       out);
 *   <li>{@code /v1/completions}: {@code prompt} as text, as token ids when it is an array of
 *       integers (exact prefix matching), or its strings joined by newlines;
 *   <li>anything else (no body, not JSON, no prompt): an empty text prompt, so the request is still
 *       routed by session and load.
 * </ul>
 *
 * <p>The prompt is only handed to the router, which hashes it; nothing here logs or keeps it.
 * Thread-safe and stateless.
 */
public final class RoutingRequestFactory {
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private final String sessionHeader;
  private final String tenantHeader;

  /**
   * Creates a factory reading the given headers.
   *
   * @throws IllegalArgumentException if a header name is blank
   */
  public RoutingRequestFactory(String sessionHeader, String tenantHeader) {
    this.sessionHeader = notBlank(sessionHeader, "sessionHeader");
    this.tenantHeader = notBlank(tenantHeader, "tenantHeader");
  }

  /**
   * A request with the headers' session and tenant and an empty prompt, for callers without a body.
   *
   * @throws IllegalArgumentException if the session id is longer than
   *     {@value RoutingRequest#MAX_SESSION_ID_BYTES} bytes in UTF-8
   */
  public RoutingRequest fromHeaders(HttpHeaders headers) {
    RoutingRequest.Builder b = RoutingRequest.builder();
    headers(b, headers);
    return b.promptText("").build();
  }

  /**
   * A request with the headers' session and tenant and the body's model and prompt.
   *
   * @param body the cached request body; null or empty for none
   * @throws IllegalArgumentException if the session id is longer than
   *     {@value RoutingRequest#MAX_SESSION_ID_BYTES} bytes in UTF-8
   */
  public RoutingRequest from(HttpHeaders headers, @Nullable DataBuffer body) {
    RoutingRequest.Builder b = RoutingRequest.builder();
    headers(b, headers);
    JsonNode root = parse(body);
    if (root == null || !root.isObject()) {
      return b.promptText("").build();
    }
    JsonNode model = root.get("model");
    if (model != null && model.isString() && !model.stringValue().isBlank()) {
      b.model(model.stringValue());
    }
    JsonNode messages = root.get("messages");
    JsonNode prompt = root.get("prompt");
    if (messages != null && messages.isArray()) {
      b.promptText(chatPrompt(messages));
    } else if (prompt != null && prompt.isArray() && isTokenArray(prompt)) {
      int[] tokens = new int[prompt.size()];
      for (int i = 0; i < tokens.length; i++) {
        tokens[i] = prompt.get(i).intValue();
      }
      b.promptTokens(tokens);
    } else if (prompt != null) {
      b.promptText(completionPrompt(prompt));
    } else {
      b.promptText("");
    }
    return b.build();
  }

  /**
   * What a {@link Tokenizer} needs to tokenize the body as the engine will: the model and the
   * chat messages (text parts joined by a newline, as vLLM does), or the completion prompt when it
   * is text; empty for anything else (no model, token ids already, not JSON).
   */
  public Optional<TokenizeRequest> tokenizeRequest(@Nullable DataBuffer body) {
    JsonNode root = parse(body);
    if (root == null || !root.isObject()) {
      return Optional.empty();
    }
    JsonNode model = root.get("model");
    if (model == null || !model.isString() || model.stringValue().isBlank()) {
      return Optional.empty();
    }
    JsonNode messages = root.get("messages");
    JsonNode prompt = root.get("prompt");
    if (messages != null && messages.isArray() && !messages.isEmpty()) {
      List<ChatMessage> chat = new ArrayList<>(messages.size());
      for (int i = 0; i < messages.size(); i++) {
        JsonNode m = messages.get(i);
        JsonNode role = m.isObject() ? m.get("role") : null;
        if (role == null || !role.isString() || role.stringValue().isBlank()) {
          return Optional.empty();
        }
        chat.add(new ChatMessage(role.stringValue(), content(m.get("content"))));
      }
      return Optional.of(TokenizeRequest.chat(model.stringValue(), chat));
    }
    if (prompt != null && prompt.isString()) {
      return Optional.of(TokenizeRequest.completion(model.stringValue(), prompt.stringValue()));
    }
    return Optional.empty();
  }

  /** A request with the headers' session and tenant, {@code model}, and the engine's token ids. */
  public RoutingRequest fromTokens(HttpHeaders headers, String model, int[] tokens) {
    RoutingRequest.Builder b = RoutingRequest.builder().model(model);
    headers(b, headers);
    return b.promptTokens(tokens).build();
  }

  private static String content(@Nullable JsonNode content) {
    if (content == null || !content.isArray()) {
      return content != null && content.isString() ? content.stringValue() : "";
    }
    StringBuilder sb = new StringBuilder();
    for (int j = 0; j < content.size(); j++) {
      JsonNode text = content.get(j).get("text");
      if (text != null && text.isString()) {
        sb.append(sb.isEmpty() ? "" : "\n").append(text.stringValue());
      }
    }
    return sb.toString();
  }

  private void headers(RoutingRequest.Builder b, HttpHeaders headers) {
    String session = headers.getFirst(sessionHeader);
    if (session != null && !session.isBlank()) {
      b.sessionId(session.strip());
    }
    String tenant = headers.getFirst(tenantHeader);
    if (tenant != null && !tenant.isBlank()) {
      b.tenant(tenant.strip());
    }
    b.retriesHeader(headers.getFirst(RoutingRequest.RETRY_COUNT_HEADER));
  }

  private static @Nullable JsonNode parse(@Nullable DataBuffer body) {
    if (body == null || body.readableByteCount() == 0) {
      return null;
    }
    // The stream shares the buffer's read position: put it back, the gateway forwards these bytes.
    int position = body.readPosition();
    try (InputStream in = body.asInputStream()) {
      return JSON.readTree(in);
    } catch (JacksonException | IOException e) {
      return null; // not JSON: routed by session and load only
    } finally {
      body.readPosition(position);
    }
  }

  private static String chatPrompt(JsonNode messages) {
    StringBuilder sb = new StringBuilder(256);
    for (int i = 0; i < messages.size(); i++) {
      JsonNode m = messages.get(i);
      if (!m.isObject()) {
        continue;
      }
      JsonNode role = m.get("role");
      sb.append(role != null && role.isString() ? role.stringValue() : "").append('\n');
      JsonNode content = m.get("content");
      if (content != null && content.isString()) {
        sb.append(content.stringValue());
      } else if (content != null && content.isArray()) {
        for (int j = 0; j < content.size(); j++) {
          JsonNode part = content.get(j);
          JsonNode text = part.get("text");
          if (text != null && text.isString()) {
            sb.append(text.stringValue());
          }
        }
      }
      sb.append('\n');
    }
    return sb.toString();
  }

  private static boolean isTokenArray(JsonNode array) {
    if (array.isEmpty()) {
      return false;
    }
    for (int i = 0; i < array.size(); i++) {
      if (!array.get(i).isInt()) {
        return false;
      }
    }
    return true;
  }

  private static String completionPrompt(JsonNode prompt) {
    if (prompt.isString()) {
      return prompt.stringValue();
    }
    if (!prompt.isArray()) {
      return "";
    }
    StringBuilder sb = new StringBuilder(256);
    for (int i = 0; i < prompt.size(); i++) {
      if (prompt.get(i).isString()) {
        if (sb.length() > 0) {
          sb.append('\n');
        }
        sb.append(prompt.get(i).stringValue());
      }
    }
    return sb.toString();
  }

  private static String notBlank(String value, String name) {
    Objects.requireNonNull(value, name);
    if (value.isBlank()) {
      throw new IllegalArgumentException(name + ": blank (expected: a header name)");
    }
    return value;
  }
}
