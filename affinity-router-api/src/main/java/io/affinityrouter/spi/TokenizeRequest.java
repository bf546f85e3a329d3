package io.affinityrouter.spi;

import io.affinityrouter.internal.Checks;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a {@link Tokenizer} turns into token ids: a chat conversation, rendered through the model's
 * chat template first (an OpenAI {@code /v1/chat/completions} body), or a completion prompt taken
 * as it is (a {@code /v1/completions} body). The flags mean what they mean in vLLM's
 * {@code POST /tokenize}, with its defaults: a chat adds the generation prompt and no special
 * tokens beyond the template's, a completion adds them (BOS). Immutable value; it never appears in
 * logs (its {@code toString} names sizes, not text).
 *
 * @param model the model the request is for; not blank
 * @param messages the conversation, or null for a completion prompt
 * @param prompt the completion prompt, or null for a chat
 * @param addGenerationPrompt chat only: append the template's opening of the assistant's turn
 * @param continueFinalMessage chat only: leave the last message open, so the model continues it
 * @param addSpecialTokens add the tokenizer's special tokens (BOS) on top of the template's
 */
public record TokenizeRequest(String model, @Nullable List<ChatMessage> messages,
    @Nullable String prompt, boolean addGenerationPrompt, boolean continueFinalMessage,
    boolean addSpecialTokens) {
  /** Checks the components and copies the messages. */
  public TokenizeRequest {
    Checks.notBlank(model, "model");
    if ((messages == null) == (prompt == null)) {
      throw new IllegalArgumentException(
          "messages and prompt: " + (messages == null ? "neither" : "both")
              + " given (expected: exactly one)");
    }
    if (messages != null) {
      messages = List.copyOf(messages);
      if (messages.isEmpty()) {
        throw new IllegalArgumentException("messages: empty (expected: at least one message)");
      }
      if (addGenerationPrompt && continueFinalMessage) {
        throw new IllegalArgumentException("continueFinalMessage: true with addGenerationPrompt "
            + "(expected: at most one of the two)");
      }
    } else if (addGenerationPrompt || continueFinalMessage) {
      throw new IllegalArgumentException(
          "addGenerationPrompt or continueFinalMessage on a completion prompt (expected: chat only)");
    }
  }

  /** A chat, with vLLM's defaults: the generation prompt appended, no extra special tokens. */
  public static TokenizeRequest chat(String model, List<ChatMessage> messages) {
    return new TokenizeRequest(model, Objects.requireNonNull(messages, "messages"), null, true,
        false, false);
  }

  /** A completion prompt, with vLLM's default: special tokens (BOS) added. */
  public static TokenizeRequest completion(String model, String prompt) {
    return new TokenizeRequest(model, null, Objects.requireNonNull(prompt, "prompt"), false, false,
        true);
  }

  /** True for a chat, false for a completion prompt. */
  public boolean isChat() {
    return messages != null;
  }

  /** Names the model and the sizes, never the text. */
  @Override
  public String toString() {
    return "TokenizeRequest[model=" + model + ", "
        + (messages != null ? messages.size() + " messages"
            : java.util.Objects.requireNonNull(prompt).length() + " prompt chars")
        + ", addGenerationPrompt=" + addGenerationPrompt + ", continueFinalMessage="
        + continueFinalMessage + ", addSpecialTokens=" + addSpecialTokens + "]";
  }
}
