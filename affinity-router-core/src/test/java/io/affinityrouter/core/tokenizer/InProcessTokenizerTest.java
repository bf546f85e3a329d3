package io.affinityrouter.core.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.spi.ChatMessage;
import io.affinityrouter.spi.TokenizeRequest;
import io.affinityrouter.spi.TokenizerException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tokenizer's contract on a small word-level {@code tokenizer.json} (HuggingFace's own
 * format, read by the native library): templates, special tokens, bad input at the boundary,
 * concurrent callers. Exactness on real models is {@link InProcessTokenizerReferenceTest}.
 */
class InProcessTokenizerTest {
  private static final String TOKENIZER = """
      {"version": "1.0", "truncation": null, "padding": null,
       "added_tokens": [
         {"id": 0, "content": "<s>", "single_word": false, "lstrip": false, "rstrip": false,
          "normalized": false, "special": true},
         {"id": 1, "content": "[UNK]", "single_word": false, "lstrip": false, "rstrip": false,
          "normalized": false, "special": true}],
       "normalizer": null,
       "pre_tokenizer": {"type": "Whitespace"},
       "post_processor": {"type": "TemplateProcessing",
         "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                    {"Sequence": {"id": "A", "type_id": 0}}],
         "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
         "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]}}},
       "decoder": null,
       "model": {"type": "WordLevel", "unk_token": "[UNK]",
         "vocab": {"<s>": 0, "[UNK]": 1, "user": 2, "assistant": 3, "system": 4, ":": 5,
                   "hello": 6, "world": 7, "|": 8, "go": 9}}}
      """;
  private static final String CONFIG = """
      {"bos_token": {"content": "<s>", "special": true}, "eos_token": null,
       "chat_template": "{{ bos_token }}{% for m in messages %}{% if m.role == 'system' and not loop.first %}{{ raise_exception('system must come first') }}{% endif %}{{ m.role }} : {{ m.content }} | {% endfor %}{% if add_generation_prompt %}assistant :{% endif %}"}
      """;

  @TempDir Path dir;

  private Path model(String config) throws Exception {
    Files.writeString(dir.resolve("tokenizer.json"), TOKENIZER);
    if (config != null) {
      Files.writeString(dir.resolve("tokenizer_config.json"), config);
    }
    return dir;
  }

  @Test
  void rendersTheTemplateWithItsSpecialTokensAndEncodesWithoutAddingMore() throws Exception {
    try (InProcessTokenizer t = InProcessTokenizer.builder().model("m", model(CONFIG)).build()) {
      int[] ids = t.tokenize(TokenizeRequest.chat("m",
          List.of(ChatMessage.user("hello world")))).join();
      // <s> user : hello world | assistant :
      assertThat(ids).containsExactly(0, 2, 5, 6, 7, 8, 3, 5);
      assertThat(t.tokenize(TokenizeRequest.completion("m", "hello go")).join())
          .as("a completion adds BOS through the post-processor").containsExactly(0, 6, 9);
      assertThat(t.models()).containsExactly("m");
    }
  }

  @Test
  void continuingTheFinalMessageStopsRightAfterItsText() throws Exception {
    try (InProcessTokenizer t = InProcessTokenizer.builder().model("m", model(CONFIG)).build()) {
      TokenizeRequest r = new TokenizeRequest("m",
          List.of(ChatMessage.user("hello"), ChatMessage.assistant("world go")), null, false,
          true, false);
      // <s> user : hello | assistant : world go   (no closing "|")
      assertThat(t.tokenize(r).join()).containsExactly(0, 2, 5, 6, 8, 3, 5, 7, 9);
    }
  }

  @Test
  void aTemplateThatRejectsTheConversationFailsTheFutureNotTheCaller() throws Exception {
    try (InProcessTokenizer t = InProcessTokenizer.builder().model("m", model(CONFIG)).build()) {
      var f = t.tokenize(TokenizeRequest.chat("m",
          List.of(ChatMessage.user("hello"), ChatMessage.system("go"))));
      assertThatThrownBy(f::join).isInstanceOf(CompletionException.class)
          .cause().isInstanceOf(TokenizerException.class)
          .hasMessageContaining("system must come first");
      var unknown = t.tokenize(TokenizeRequest.completion("other", "hello"));
      assertThatThrownBy(unknown::join).cause().isInstanceOf(TokenizerException.class)
          .hasMessage("model: other (expected: one of [m])");
    }
  }

  @Test
  void aModelWithoutATemplateTokenizesPromptsAndRefusesChats() throws Exception {
    try (InProcessTokenizer t = InProcessTokenizer.builder().model("m", model(null)).build()) {
      assertThat(t.tokenize(TokenizeRequest.completion("m", "go")).join()).containsExactly(0, 9);
      assertThatThrownBy(t.tokenize(TokenizeRequest.chat("m", List.of(ChatMessage.user("go"))))
          ::join).cause().hasMessage("model m: no chat template");
    }
  }

  @Test
  void aTemplateOverrideWinsAndAJinjaFileBesideTheConfigWinsOverIt() throws Exception {
    Path m = model(CONFIG);
    try (InProcessTokenizer t = InProcessTokenizer.builder().model("m", m)
        .chatTemplate("m", "{% for m in messages %}{{ m.content }}{% endfor %}").build()) {
      assertThat(t.tokenize(TokenizeRequest.chat("m", List.of(ChatMessage.user("go")))).join())
          .containsExactly(9);
    }
    Files.writeString(m.resolve("chat_template.jinja"), "hello {{ messages[0].content }}\n");
    try (InProcessTokenizer t = InProcessTokenizer.builder().model("m", m).build()) {
      assertThat(t.tokenize(TokenizeRequest.chat("m", List.of(ChatMessage.user("go")))).join())
          .containsExactly(6, 9);
    }
  }

  @Test
  void badInputFailsAtTheBoundaryWithWhatWasExpected() throws Exception {
    assertThatThrownBy(() -> InProcessTokenizer.builder().build())
        .hasMessage("models: none (expected: at least one)");
    assertThatThrownBy(() -> InProcessTokenizer.builder().model(" ", dir))
        .hasMessage("model: blank (expected: a model name)");
    assertThatThrownBy(() -> InProcessTokenizer.builder().model("m", dir).model("m", dir))
        .hasMessage("model: m given twice");
    assertThatThrownBy(() -> InProcessTokenizer.builder().model("m", dir).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("(expected: the model's tokenizer.json)");
    assertThatThrownBy(() -> InProcessTokenizer.builder().chatTemplate("m", "{% macro x() %}"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("model m: chat template: tag at offset 0: unsupported tag 'macro'");
    assertThatThrownBy(() -> InProcessTokenizer.builder().model("m", model("{\"chat_template\": "
        + "\"{% include 'x' %}\"}")).build())
        .hasMessageContaining("unsupported tag 'include'");
    Files.writeString(dir.resolve("tokenizer_config.json"), CONFIG);
    Files.writeString(dir.resolve("tokenizer.json"), "{\"not\": \"a tokenizer\"}");
    assertThatThrownBy(() -> InProcessTokenizer.builder().model("m", dir).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("is not a tokenizer");
  }

  @Test
  void concurrentCallersGetTheSameIdsAsOne() throws Exception {
    try (InProcessTokenizer t = InProcessTokenizer.builder().model("m", model(CONFIG)).build()) {
      List<ChatMessage> chat = new ArrayList<>();
      for (int i = 0; i < 50; i++) {
        chat.add(i % 2 == 0 ? ChatMessage.user("hello world go") : ChatMessage.assistant("go"));
      }
      int[] expected = t.tokenize(TokenizeRequest.chat("m", chat)).join();
      ExecutorService pool = Executors.newFixedThreadPool(4);
      try {
        List<Future<Boolean>> results = new ArrayList<>();
        for (int k = 0; k < 4; k++) {
          results.add(pool.submit(() -> {
            for (int i = 0; i < 500; i++) {
              if (!java.util.Arrays.equals(t.tokenize(TokenizeRequest.chat("m", chat)).join(),
                  expected)) {
                return false;
              }
            }
            return true;
          }));
        }
        for (Future<Boolean> r : results) {
          assertThat(r.get()).isTrue();
        }
      } finally {
        pool.shutdownNow();
      }
    }
  }

  @Test
  void closingWhileCallersEncodeWaitsForThemAndLaterCallsFail() throws Exception {
    InProcessTokenizer t = InProcessTokenizer.builder().model("m", model(CONFIG)).build();
    TokenizeRequest r = TokenizeRequest.completion("m", "hello world go ".repeat(2_000));
    int[] expected = t.tokenize(r).join();
    ExecutorService pool = Executors.newFixedThreadPool(3);
    java.util.concurrent.CountDownLatch running = new java.util.concurrent.CountDownLatch(3);
    try {
      List<Future<Integer>> callers = new ArrayList<>();
      for (int k = 0; k < 3; k++) {
        callers.add(pool.submit(() -> {
          int ok = 0;
          while (true) {
            var f = t.tokenize(r);
            if (f.isCompletedExceptionally()) {
              assertThatThrownBy(f::join).cause().hasMessage("closed");
              return ok;
            }
            assertThat(f.join()).isEqualTo(expected);
            if (ok++ == 0) {
              running.countDown();
            }
          }
        }));
      }
      running.await();
      t.close();
      t.close();
      for (Future<Integer> c : callers) {
        assertThat(c.get()).isPositive();
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void toStringNamesModelsNeverText() throws Exception {
    try (InProcessTokenizer t = InProcessTokenizer.builder().model("m", model(CONFIG)).build()) {
      assertThat(t).hasToString("InProcessTokenizer[m]");
    }
  }
}
