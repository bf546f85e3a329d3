package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.examples.fakevllm.FakeVllmConfig;
import io.affinityrouter.examples.fakevllm.FakeVllmServer;
import java.net.URI;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code --tokenizer engine} with {@code --kv-events}: prompts tokenized by a backend's
 * {@code /tokenize}, blocks learnt from the backends' KV events, so a gateway that never routed a
 * conversation (its own in-memory bindings, nothing shared) finds where the engine cached it.
 */
class GatewayEngineTokensTest {
  private static final String SYSTEM = "You are a careful analyst of quarterly reports. ";
  private final ChatClient client = new ChatClient();
  private TestFleet fleet;

  @AfterEach
  void stop() {
    fleet.close();
  }

  private GatewayConfig.Builder engineTokens() {
    GatewayConfig.Builder b = fleet.config().tokenization(GatewayConfig.Tokenization.ENGINE);
    for (int i = 0; i < fleet.backends.size(); i++) {
      FakeVllmServer s = fleet.backends.get(i);
      b.kvEvents(TestFleet.id(i), new GatewayConfig.KvEvents(
          URI.create(s.kvEventsUri().orElseThrow()),
          Optional.of(URI.create(s.kvEventsReplayUri().orElseThrow()))));
    }
    return b;
  }

  private static String chat(String system, String user) {
    return "{\"model\":\"" + TestFleet.MODEL + "\",\"max_tokens\":4,\"messages\":["
        + "{\"role\":\"system\",\"content\":\"" + system + "\"},"
        + "{\"role\":\"user\",\"content\":\"" + user + "\"}]}";
  }

  /** {@code x-affinity-cached-blocks} as {matched, total}. */
  private static int[] cachedBlocks(ChatClient.Reply r) {
    String[] v = r.headers().firstValue("x-affinity-cached-blocks").orElseThrow().split("/");
    return new int[] {Integer.parseInt(v[0]), Integer.parseInt(v[1])};
  }

  @Test
  void aGatewayThatNeverRoutedAConversationFindsWhereTheEngineCachedIt() throws Exception {
    fleet = TestFleet.start(2, FakeVllmConfig.builder().latencyScale(0).kvEvents(0, 0));
    Gateway a = fleet.gateway(engineTokens(), null);
    Gateway b = fleet.gateway(engineTokens(), null);
    fleet.awaitAllEventsApplied(client, a, b);

    String system = SYSTEM.repeat(100); // long: its cached blocks outweigh load the scrapes show
    ChatClient.Reply first = client.post(a.baseUrl(), "/v1/chat/completions", "s-1",
        chat(system, "Summarize the quarter."));
    assertThat(first.status()).isEqualTo(200);
    int[] cold = cachedBlocks(first);
    assertThat(cold[0]).isZero();
    assertThat(cold[1]).isGreaterThan(8);

    // the engine's batch for this prompt reaches b (batches count after their events applied)
    String replica = first.replica();
    fleet.awaitAllEventsApplied(client, b);

    ChatClient.Reply elsewhere = client.post(b.baseUrl(), "/v1/chat/completions", "s-2",
        chat(system, "Summarize the quarter. Then the outlook."));
    assertThat(elsewhere.status()).isEqualTo(200);
    assertThat(elsewhere.replica()).isEqualTo(replica);
    int[] warm = cachedBlocks(elsewhere);
    // every full block of the shared system prompt and question, in the engine's own tokens
    assertThat(warm[0]).isGreaterThanOrEqualTo(cold[1] - 1);
    assertThat(b.tokenizeFallbacks()).isZero();
  }

  @Test
  void aFailingTokenizeRoutesOnTheTextAndServes() throws Exception {
    fleet = TestFleet.start(2, FakeVllmConfig.builder().latencyScale(0));
    Gateway g = fleet.gateway(fleet.config().tokenization(GatewayConfig.Tokenization.ENGINE),
        null);
    fleet.backends.forEach(s -> s.tokenizeFault(500));

    ChatClient.Reply r = client.post(g.baseUrl(), "/v1/chat/completions", "s-1",
        chat(SYSTEM, "Hello."));
    assertThat(r.status()).isEqualTo(200);
    assertThat(g.tokenizeFallbacks()).isEqualTo(1);

    fleet.backends.forEach(s -> s.tokenizeFault(0));
    ChatClient.Reply again = client.post(g.baseUrl(), "/v1/chat/completions", "s-1",
        chat(SYSTEM, "Hello."));
    assertThat(again.status()).isEqualTo(200);
    assertThat(again.replica()).as("the session stays pinned").isEqualTo(r.replica());
    assertThat(g.tokenizeFallbacks()).isEqualTo(1);
  }

  @Test
  void aRequestWithoutAModelIsRoutedOnItsTextWithoutAsking() throws Exception {
    fleet = TestFleet.start(1, FakeVllmConfig.builder().latencyScale(0));
    Gateway g = fleet.gateway(fleet.config().tokenization(GatewayConfig.Tokenization.ENGINE),
        null);
    fleet.backends.get(0).tokenizeFault(500); // asked, it would fail and count a fallback
    ChatClient.Reply r = client.post(g.baseUrl(), "/v1/chat/completions", null,
        "{\"messages\":[{\"role\":\"user\",\"content\":\"Hello.\"}]}");
    assertThat(r.status()).isEqualTo(200);
    assertThat(g.tokenizeFallbacks()).isZero();
  }
}
