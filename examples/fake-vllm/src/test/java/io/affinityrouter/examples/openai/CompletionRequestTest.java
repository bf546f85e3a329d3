package io.affinityrouter.examples.openai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.examples.json.JsonException;
import org.junit.jupiter.api.Test;

class CompletionRequestTest {

  @Test
  void chatRendersMessagesSoTheNextTurnExtendsThePrevious() {
    String turn1 = "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},"
        + "{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":7,\"stream\":true,"
        + "\"stream_options\":{\"include_usage\":true}}";
    String turn2 = "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"be brief\"},"
        + "{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"hello\"},"
        + "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"more\"}]}]}";
    CompletionRequest r1 = CompletionRequest.parse(Endpoint.CHAT, turn1);
    CompletionRequest r2 = CompletionRequest.parse(Endpoint.CHAT, turn2);
    assertThat(r1.promptText()).isEqualTo("<|system|>\nbe brief\n<|user|>\nhi\n");
    assertThat(r2.promptText()).startsWith(r1.promptText()).endsWith("<|user|>\nmore\n");
    assertThat(r1.model()).contains("m");
    assertThat(r1.maxTokens()).hasValue(7);
    assertThat(r1.stream()).isTrue();
    assertThat(r1.includeUsage()).isTrue();
    assertThat(r2.stream()).isFalse();
    assertThat(r2.maxTokens()).isEmpty();
    assertThat(r1.toString()).doesNotContain("brief").contains("promptChars=");
    assertThat(r2.messages()).containsExactly(
        new CompletionRequest.Message("system", "be brief"),
        new CompletionRequest.Message("user", "hi"),
        new CompletionRequest.Message("assistant", "hello"),
        new CompletionRequest.Message("user", "more"));
    assertThat(r2.messages().get(0).toString()).doesNotContain("brief").contains("chars=8");
    assertThat(CompletionRequest.parse(Endpoint.COMPLETIONS, "{\"prompt\":\"abc\"}").messages())
        .isEmpty();
  }

  @Test
  void completionsTakeAStringOrStrings() {
    assertThat(CompletionRequest.parse(Endpoint.COMPLETIONS, "{\"prompt\":\"abc\"}").promptText())
        .isEqualTo("abc");
    assertThat(CompletionRequest.parse(Endpoint.COMPLETIONS, "{\"prompt\":[\"a\",\"b\"]}")
        .promptText()).isEqualTo("a\nb\n");
    assertThat(CompletionRequest.parse(Endpoint.COMPLETIONS,
        "{\"prompt\":\"x\",\"max_completion_tokens\":3}").maxTokens()).hasValue(3);
  }

  @Test
  void badFieldsAreNamedWithoutQuotingThePrompt() {
    assertThatThrownBy(() -> CompletionRequest.parse(Endpoint.CHAT, "{\"model\":\"m\"}"))
        .isInstanceOf(JsonException.class)
        .hasMessage("messages: missing (expected: a non-empty array of {role, content})");
    assertThatThrownBy(() -> CompletionRequest.parse(Endpoint.CHAT,
        "{\"messages\":[{\"role\":\"user\",\"content\":42}]}"))
        .hasMessage("messages[0].content: a JSON number (expected: a string or an array of parts)");
    assertThatThrownBy(() -> CompletionRequest.parse(Endpoint.CHAT,
        "{\"messages\":[{\"content\":\"secret words\"}]}"))
        .hasMessage("messages[0].role: missing (expected: a string)");
    assertThatThrownBy(() -> CompletionRequest.parse(Endpoint.COMPLETIONS,
        "{\"prompt\":[1,2,3]}")).hasMessageContaining("token-id prompts are not supported");
    assertThatThrownBy(() -> CompletionRequest.parse(Endpoint.COMPLETIONS,
        "{\"prompt\":\"p\",\"max_tokens\":0}"))
        .hasMessage("max_tokens: 0 (expected: an integer in 1.." + CompletionRequest.MAX_OUTPUT_TOKENS
            + ")");
    assertThatThrownBy(() -> CompletionRequest.parse(Endpoint.COMPLETIONS,
        "{\"prompt\":\"p\",\"stream\":\"yes\"}"))
        .hasMessage("stream: a JSON string (expected: a boolean)");
    assertThatThrownBy(() -> CompletionRequest.parse(Endpoint.COMPLETIONS,
        "{\"prompt\":\"p\",\"model\":\" \"}"))
        .hasMessage("model: a JSON string (expected: a non-blank string)");
  }

  @Test
  void endpointsByPath() {
    assertThat(Endpoint.forPath("/v1/chat/completions")).contains(Endpoint.CHAT);
    assertThat(Endpoint.forPath("/v1/completions")).contains(Endpoint.COMPLETIONS);
    assertThat(Endpoint.forPath("/v1/embeddings")).isEmpty();
  }
}
