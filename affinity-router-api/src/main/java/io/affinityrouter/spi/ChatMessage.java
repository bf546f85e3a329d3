package io.affinityrouter.spi;

import io.affinityrouter.internal.Checks;
import java.util.Objects;

/**
 * One message of a chat conversation as a {@link Tokenizer} renders it through the model's chat
 * template: its role and its text. A message whose content is a list of parts is passed as the
 * text of its {@code text} parts joined by {@code "\n"}, as vLLM does for templates that take
 * string content. Immutable value; holds the text only for the call it is built for.
 *
 * @param role the role, such as {@code system}, {@code user}, {@code assistant} or {@code tool};
 *     not blank
 * @param content the message's text, possibly empty
 */
public record ChatMessage(String role, String content) {
  /** Checks the components. */
  public ChatMessage {
    Checks.notBlank(role, "role");
    Objects.requireNonNull(content, "content");
  }

  /** A {@code system} message. */
  public static ChatMessage system(String content) {
    return new ChatMessage("system", content);
  }

  /** A {@code user} message. */
  public static ChatMessage user(String content) {
    return new ChatMessage("user", content);
  }

  /** An {@code assistant} message. */
  public static ChatMessage assistant(String content) {
    return new ChatMessage("assistant", content);
  }

  /** Names the role and the content's length, never its text. */
  @Override
  public String toString() {
    return "ChatMessage[role=" + role + ", content=" + content.length() + " chars]";
  }
}
