package io.affinityrouter.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TokenizeRequestTest {
  @Test
  void chatAndCompletionTakeVllmDefaults() {
    TokenizeRequest chat = TokenizeRequest.chat("m", List.of(ChatMessage.user("secret words")));
    assertThat(chat.isChat()).isTrue();
    assertThat(chat.addGenerationPrompt()).isTrue();
    assertThat(chat.addSpecialTokens()).isFalse();
    TokenizeRequest completion = TokenizeRequest.completion("m", "secret words");
    assertThat(completion.isChat()).isFalse();
    assertThat(completion.addSpecialTokens()).isTrue();
    assertThat(chat.toString() + completion + ChatMessage.user("secret words"))
        .doesNotContain("secret");
  }

  @Test
  void messagesAreCopied() {
    List<ChatMessage> messages = new ArrayList<>(List.of(ChatMessage.user("a")));
    TokenizeRequest r = TokenizeRequest.chat("m", messages);
    messages.add(ChatMessage.assistant("b"));
    assertThat(r.messages()).hasSize(1);
  }

  @Test
  void badInputIsRefusedAtTheBoundary() {
    assertThatThrownBy(() -> new TokenizeRequest("m", null, null, false, false, false))
        .hasMessage("messages and prompt: neither given (expected: exactly one)");
    assertThatThrownBy(() -> TokenizeRequest.chat("m", List.of()))
        .hasMessage("messages: empty (expected: at least one message)");
    assertThatThrownBy(() -> new TokenizeRequest("m", List.of(ChatMessage.user("a")), null, true,
        true, false)).hasMessageStartingWith("continueFinalMessage: true with addGenerationPrompt");
    assertThatThrownBy(() -> new TokenizeRequest("m", null, "p", true, false, true))
        .hasMessageStartingWith("addGenerationPrompt or continueFinalMessage on a completion");
    assertThatThrownBy(() -> TokenizeRequest.completion(" ", "p"))
        .hasMessage("model: blank (expected: a non-blank string)");
    assertThatThrownBy(() -> new ChatMessage("", "x"))
        .hasMessage("role: blank (expected: a non-blank string)");
  }
}
