package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.examples.fakevllm.FakeVllmConfig;
import io.affinityrouter.examples.fakevllm.FakeVllmServer;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code --tokenizer local} with {@code --kv-events}: the gateway renders the chat template and
 * tokenizes in process with a real model's HuggingFace files (Qwen 3), the backends tokenize with
 * the same files as a vLLM serving that model does and publish KV events for those ids, so a
 * gateway that never routed a conversation finds where the engine cached it, with no
 * {@code /tokenize} round trip.
 *
 * <p>The model is {@code qwen3} under {@code -Dtokenizer.models}, {@code $TOKENIZER_MODELS} or
 * {@code ../../.tokenizer-models} (which {@code .ci/run} fetches); without it the test fails
 * when {@code CI=true}, and is skipped elsewhere.
 */
class GatewayLocalTokensTest {
  private static final String SYSTEM = "You are a careful analyst of quarterly reports. ";
  private final ChatClient client = new ChatClient();
  private TestFleet fleet;
  private Path model;

  @BeforeEach
  void findModel() {
    String p = System.getProperty("tokenizer.models");
    if (p == null || p.isBlank()) {
      p = System.getenv("TOKENIZER_MODELS");
    }
    Path root = p == null || p.isBlank() ? Path.of("..", "..", ".tokenizer-models") : Path.of(p);
    model = root.resolve("qwen3");
    if (!Files.isRegularFile(model.resolve("tokenizer.json"))) {
      String message = model + "/tokenizer.json missing; .ci/run fetches it";
      if ("true".equalsIgnoreCase(System.getenv("CI"))) {
        throw new AssertionError(message);
      }
      Assumptions.abort(message);
    }
  }

  @AfterEach
  void stop() {
    if (fleet != null) {
      fleet.close();
    }
  }

  private GatewayConfig.Builder localTokens() {
    GatewayConfig.Builder b = fleet.config().tokenization(GatewayConfig.Tokenization.LOCAL)
        .tokenizerModel(TestFleet.MODEL, model);
    for (int i = 0; i < fleet.backends.size(); i++) {
      FakeVllmServer s = fleet.backends.get(i);
      b.kvEvents(TestFleet.id(i), new GatewayConfig.KvEvents(
          URI.create(s.kvEventsUri().orElseThrow()),
          Optional.of(URI.create(s.kvEventsReplayUri().orElseThrow()))));
    }
    return b;
  }

  private static String chat(String model, String system, String user) {
    return "{\"model\":\"" + model + "\",\"max_tokens\":4,\"messages\":["
        + "{\"role\":\"system\",\"content\":\"" + system + "\"},"
        + "{\"role\":\"user\",\"content\":\"" + user + "\"}]}";
  }

  private static int[] cachedBlocks(ChatClient.Reply r) {
    String[] v = r.headers().firstValue("x-affinity-cached-blocks").orElseThrow().split("/");
    return new int[] {Integer.parseInt(v[0]), Integer.parseInt(v[1])};
  }

  @Test
  void aGatewayThatNeverRoutedAConversationFindsTheEngineBlocksOfItsChatTemplate()
      throws Exception {
    fleet = TestFleet.start(2,
        FakeVllmConfig.builder().latencyScale(0).kvEvents(0, 0).tokenizerDir(model));
    Gateway a = fleet.gateway(localTokens(), null);
    Gateway b = fleet.gateway(localTokens(), null);
    fleet.awaitAllEventsApplied(client, a, b);

    String system = SYSTEM.repeat(100); // long: its cached blocks outweigh load the scrapes show
    ChatClient.Reply first = client.post(a.baseUrl(), "/v1/chat/completions", "s-1",
        chat(TestFleet.MODEL, system, "Summarize the quarter."));
    assertThat(first.status()).isEqualTo(200);
    int[] cold = cachedBlocks(first);
    assertThat(cold[0]).isZero();
    assertThat(cold[1]).as("blocks of the rendered chat's tokens").isGreaterThan(4);

    String replica = first.replica();
    fleet.awaitAllEventsApplied(client, b);

    ChatClient.Reply elsewhere = client.post(b.baseUrl(), "/v1/chat/completions", "s-2",
        chat(TestFleet.MODEL, system, "Summarize the quarter. Then the outlook."));
    assertThat(elsewhere.status()).isEqualTo(200);
    assertThat(elsewhere.replica()).isEqualTo(replica);
    int[] warm = cachedBlocks(elsewhere);
    // the shared system prompt's full blocks, in the engine's own tokens of the rendered template
    assertThat(warm[0]).isGreaterThanOrEqualTo(cold[1] - 2);
    assertThat(a.tokenizeFallbacks() + b.tokenizeFallbacks()).isZero();
  }

  @Test
  void aRequestForAModelWithoutTokenizerFilesIsRoutedOnItsText() throws Exception {
    fleet = TestFleet.start(1, FakeVllmConfig.builder().latencyScale(0));
    Gateway g = fleet.gateway(fleet.config().tokenization(GatewayConfig.Tokenization.LOCAL)
        .tokenizerModel("some-other-model", model), null);
    ChatClient.Reply r = client.post(g.baseUrl(), "/v1/chat/completions", "s-1",
        chat(TestFleet.MODEL, SYSTEM, "Hello."));
    assertThat(r.status()).isEqualTo(200);
    assertThat(g.tokenizeFallbacks()).isEqualTo(1);
  }
}
