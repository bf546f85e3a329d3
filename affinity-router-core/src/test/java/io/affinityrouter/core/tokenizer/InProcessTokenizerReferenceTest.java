package io.affinityrouter.core.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import io.affinityrouter.spi.ChatMessage;
import io.affinityrouter.spi.TokenizeRequest;
import io.affinityrouter.spi.TokenizerException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Exactness against the reference: for each of three real chat templates and their tokenizers
 * (Llama 3, Qwen 2.5, Qwen 3), 1,000 seeded conversations and prompts rendered and encoded by
 * Python {@code transformers} ({@code src/test/python/chat_reference.py}, as vLLM's
 * {@code /tokenize} computes them) must come out of {@link InProcessTokenizer} token for token,
 * and those the reference rejects must be rejected.
 *
 * <p>The models are directories {@code llama3}, {@code qwen2_5}, {@code qwen3} (each a
 * {@code tokenizer.json} and {@code tokenizer_config.json}) under {@code -Dtokenizer.models},
 * {@code $TOKENIZER_MODELS} or {@code ../.tokenizer-models}; Python with {@code transformers} is
 * {@code -Dtokenizer.python}, {@code $TOKENIZER_PYTHON} or {@code ../.tokenizer-venv/bin/python}.
 * {@code .ci/run} provides both. Without them the test fails when {@code CI=true}, and is skipped
 * elsewhere.
 */
class InProcessTokenizerReferenceTest {
  private static final int CASES = 1_000;
  private static final int SEED = 7;

  @ParameterizedTest
  @ValueSource(strings = {"llama3", "qwen2_5", "qwen3"})
  void everyConversationMatchesTransformersTokenForToken(String name) throws Exception {
    Path dir = models().resolve(name);
    String python = python();
    require(Files.isRegularFile(dir.resolve("tokenizer.json")), dir + "/tokenizer.json missing");
    List<String> lines = reference(python, dir);
    assertThat(lines).hasSize(CASES);

    int matched = 0;
    int rejected = 0;
    List<String> mismatches = new ArrayList<>();
    JsonFactory json = new JsonFactory();
    try (InProcessTokenizer tokenizer = InProcessTokenizer.builder().model(name, dir).build()) {
      for (int i = 0; i < lines.size(); i++) {
        Map<?, ?> c;
        try (JsonParser p = json.createParser(lines.get(i))) {
          p.nextToken();
          c = (Map<?, ?>) JsonValues.read(p);
        }
        TokenizeRequest request = request(name, c);
        int[] ids;
        try {
          ids = tokenizer.ids(request);
        } catch (TokenizerException e) {
          if (c.containsKey("error")) {
            rejected++;
          } else {
            mismatches.add("case " + i + ": rejected (" + e.getMessage() + ")");
          }
          continue;
        }
        if (c.containsKey("error")) {
          mismatches.add("case " + i + ": accepted, the reference raised " + c.get("error"));
          continue;
        }
        int[] expected = ((List<?>) c.get("ids")).stream()
            .mapToInt(o -> ((Long) o).intValue()).toArray();
        if (Arrays.equals(ids, expected)) {
          matched++;
        } else {
          mismatches.add("case " + i + ": " + firstDifference(ids, expected));
        }
      }
    }
    assertThat(mismatches).as(name + ": %d matched, %d rejected as the reference does", matched,
        rejected).isEmpty();
    assertThat(matched).isGreaterThan(CASES * 9 / 10);
  }

  private static TokenizeRequest request(String model, Map<?, ?> c) {
    if (c.containsKey("prompt")) {
      return TokenizeRequest.completion(model, (String) c.get("prompt"));
    }
    List<ChatMessage> messages = new ArrayList<>();
    for (Object o : (List<?>) c.get("messages")) {
      Map<?, ?> m = (Map<?, ?>) o;
      messages.add(new ChatMessage((String) m.get("role"), (String) m.get("content")));
    }
    return new TokenizeRequest(model, messages, null,
        (Boolean) c.get("add_generation_prompt"), (Boolean) c.get("continue_final_message"),
        false);
  }

  private static String firstDifference(int[] actual, int[] expected) {
    int k = 0;
    while (k < Math.min(actual.length, expected.length) && actual[k] == expected[k]) {
      k++;
    }
    return actual.length + " ids against " + expected.length + ", first difference at " + k
        + ": " + Arrays.toString(Arrays.copyOfRange(actual, k, Math.min(actual.length, k + 5)))
        + " against "
        + Arrays.toString(Arrays.copyOfRange(expected, k, Math.min(expected.length, k + 5)));
  }

  private static List<String> reference(String python, Path dir) throws Exception {
    Path script = Path.of("src", "test", "python", "chat_reference.py");
    Process process;
    try {
      process = new ProcessBuilder(python, script.toString(), dir.toString(),
          String.valueOf(CASES), String.valueOf(SEED))
          .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    } catch (IOException e) {
      require(false, python + ": " + e.getMessage());
      throw e;
    }
    List<String> lines = new ArrayList<>();
    try (BufferedReader r = new BufferedReader(
        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        lines.add(line);
      }
    }
    if (!process.waitFor(10, TimeUnit.MINUTES)) {
      process.destroyForcibly();
      throw new AssertionError("the reference did not finish");
    }
    require(process.exitValue() == 0 || !lines.isEmpty(),
        python + " with transformers failed (exit " + process.exitValue() + ")");
    assertThat(process.exitValue()).as("reference exit code").isZero();
    return lines;
  }

  private static Path models() {
    String p = System.getProperty("tokenizer.models");
    if (p == null || p.isBlank()) {
      p = System.getenv("TOKENIZER_MODELS");
    }
    return p == null || p.isBlank() ? Path.of("..", ".tokenizer-models") : Path.of(p);
  }

  static String python() {
    return TokenizerReference.python();
  }

  static void require(boolean ok, String problem) {
    TokenizerReference.require(ok, problem);
  }
}
