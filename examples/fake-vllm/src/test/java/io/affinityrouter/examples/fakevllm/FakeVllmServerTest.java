package io.affinityrouter.examples.fakevllm;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.ModelState;
import io.affinityrouter.core.metrics.EngineMetrics;
import io.affinityrouter.core.metrics.ModelMetrics;
import io.affinityrouter.examples.json.Json;
import io.affinityrouter.spi.ReplicaEndpoint.Engine;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The fake replica on a real socket, its metrics read by the core's real parser. */
class FakeVllmServerTest {
  private static final String MODEL = "test-model";
  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).build();
  private FakeVllmServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  private FakeVllmServer start(FakeVllmConfig.Builder config) {
    server = FakeVllmServer.start(new InetSocketAddress("127.0.0.1", 0),
        config.model(MODEL).build());
    return server;
  }

  private HttpResponse<String> post(String path, String body) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create(server.baseUrl() + path))
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private EngineMetrics scrape() throws Exception {
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(
        URI.create(server.baseUrl() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    return EngineMetrics.parseStrict(r.body());
  }

  private static String chat(String content, int maxTokens, boolean stream) {
    return "{\"model\":\"" + MODEL + "\",\"max_tokens\":" + maxTokens + ",\"stream\":" + stream
        + ",\"stream_options\":{\"include_usage\":true},\"messages\":[{\"role\":\"user\","
        + "\"content\":\"" + content + "\"}]}";
  }

  @Test
  void chatCompletionReportsUsageWithCachedTokensAndMetricsAgree() throws Exception {
    start(FakeVllmConfig.builder().latencyScale(0));
    String prompt = "x".repeat(640); // 160 tokens, 10 full blocks of 64 chars with the template
    HttpResponse<String> first = post("/v1/chat/completions", chat(prompt, 5, false));
    assertThat(first.statusCode()).isEqualTo(200);
    Map<String, Object> body = Json.parseObject(first.body());
    assertThat(body.get("object")).isEqualTo("chat.completion");
    Map<?, ?> usage = (Map<?, ?>) body.get("usage");
    long promptTokens = (Long) usage.get("prompt_tokens");
    assertThat(usage.get("completion_tokens")).isEqualTo(5L);
    assertThat(((Map<?, ?>) usage.get("prompt_tokens_details")).get("cached_tokens")).isEqualTo(0L);
    Map<?, ?> message = (Map<?, ?>) ((Map<?, ?>) ((List<?>) body.get("choices")).get(0))
        .get("message");
    assertThat((String) message.get("content")).isNotBlank();

    HttpResponse<String> second = post("/v1/chat/completions", chat(prompt, 5, false));
    Map<?, ?> usage2 = (Map<?, ?>) Json.parseObject(second.body()).get("usage");
    long cached = (Long) ((Map<?, ?>) usage2.get("prompt_tokens_details")).get("cached_tokens");
    assertThat(cached).isEqualTo((promptTokens * 4 / 64) * 16); // every full block

    EngineMetrics m = scrape();
    assertThat(m.engine()).isEqualTo(Engine.VLLM);
    assertThat(m.anomalies()).isZero();
    ModelMetrics mm = m.model(MODEL).orElseThrow();
    assertThat(mm.prefixCacheQueries()).hasValue(2.0 * promptTokens);
    assertThat(mm.prefixCacheHits()).hasValue((double) cached);
    assertThat(mm.promptTokens()).hasValue(2.0 * promptTokens);
    assertThat(mm.generationTokens()).hasValue(10.0);
    assertThat(mm.kvBlockSize()).hasValue(16);
    assertThat(mm.state()).isEqualTo(ModelState.ACTIVE);
    assertThat(m.replicaLoad().kvCapacityTokens())
        .isEqualTo(16L * FakeVllmConfig.DEFAULT_NUM_GPU_BLOCKS);
    assertThat(m.replicaLoad().runningRequests()).isZero();
    assertThat(m.modelStates()).containsEntry(MODEL, ModelState.ACTIVE);
  }

  @Test
  void streamCarriesTheSameTextChunkByChunkThenUsageAndDone() throws Exception {
    start(FakeVllmConfig.builder().latencyScale(0));
    String whole = (String) ((Map<?, ?>) ((Map<?, ?>) ((List<?>) Json.parseObject(
        post("/v1/chat/completions", chat("hello there", 12, false)).body()).get("choices"))
        .get(0)).get("message")).get("content");
    HttpResponse<String> r = post("/v1/chat/completions", chat("hello there", 12, true));
    assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(
        t -> assertThat(t).startsWith("text/event-stream"));
    List<String> events = new ArrayList<>();
    for (String block : r.body().split("\n\n")) {
      assertThat(block).startsWith("data: ");
      events.add(block.substring(6));
    }
    assertThat(events.get(events.size() - 1)).isEqualTo("[DONE]");
    StringBuilder text = new StringBuilder();
    int tokenChunks = 0;
    for (String e : events.subList(0, events.size() - 2)) {
      Map<?, ?> delta = (Map<?, ?>) ((Map<?, ?>) ((List<?>) Json.parseObject(e).get("choices"))
          .get(0)).get("delta");
      String content = (String) delta.get("content");
      if (!content.isEmpty()) {
        tokenChunks++;
      }
      text.append(content);
    }
    assertThat(tokenChunks).isEqualTo(12);
    assertThat(text.toString()).isEqualTo(whole);
    Map<?, ?> usage = (Map<?, ?>) Json.parseObject(events.get(events.size() - 2)).get("usage");
    assertThat(usage.get("completion_tokens")).isEqualTo(12L);
  }

  @Test
  void completionsEndpointStreamsText() throws Exception {
    start(FakeVllmConfig.builder().latencyScale(0));
    HttpResponse<String> r = post("/v1/completions",
        "{\"prompt\":\"once upon a time\",\"max_tokens\":3,\"stream\":true}");
    assertThat(r.statusCode()).isEqualTo(200);
    String[] events = r.body().split("\n\n");
    assertThat(events).hasSize(4); // 3 tokens, [DONE]; no usage chunk unless asked
    assertThat(Json.parseObject(events[0].substring(6)).get("object"))
        .isEqualTo("text_completion");
  }

  @Test
  void latencyGrowsWithUncachedPromptTokensAndOutputLength() throws Exception {
    // 1 ms per uncached prompt token, 5 ms per output token.
    start(FakeVllmConfig.builder().micros(1000, 5000));
    String prompt = "y".repeat(1200); // ~300 tokens
    long t0 = System.nanoTime();
    post("/v1/chat/completions", chat(prompt, 1, false));
    long coldMs = (System.nanoTime() - t0) / 1_000_000;
    t0 = System.nanoTime();
    post("/v1/chat/completions", chat(prompt, 1, false));
    long warmMs = (System.nanoTime() - t0) / 1_000_000;
    t0 = System.nanoTime();
    post("/v1/chat/completions", chat(prompt, 40, false));
    long longMs = (System.nanoTime() - t0) / 1_000_000;
    assertThat(coldMs).isGreaterThanOrEqualTo(290);
    assertThat(warmMs).isLessThan(coldMs - 200);
    assertThat(longMs).isGreaterThanOrEqualTo(200).isGreaterThan(warmMs + 150);
  }

  @Test
  void sleepingEngineReportsItAndRefusesUntilWoken() throws Exception {
    start(FakeVllmConfig.builder().latencyScale(0));
    assertThat(post("/sleep?level=1", "").statusCode()).isEqualTo(200);
    assertThat(server.isSleeping()).isTrue();
    assertThat(scrape().modelStates()).containsEntry(MODEL, ModelState.SLEEPING);
    HttpResponse<String> refused = post("/v1/chat/completions", chat("hi", 1, false));
    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(Json.parseObject(refused.body()).get("object")).isEqualTo("error");
    assertThat(post("/sleep?level=3", "").statusCode()).isEqualTo(400);
    assertThat(post("/sleep?mode=wait&level=1", "").statusCode()).isEqualTo(200);
    assertThat(post("/sleep?level=1&mode=later", "").statusCode()).isEqualTo(400);
    assertThat(post("/wake_up", "").statusCode()).isEqualTo(200);
    assertThat(server.wakeUps()).isEqualTo(1);
    assertThat(scrape().modelStates()).containsEntry(MODEL, ModelState.ACTIVE);
    assertThat(post("/v1/chat/completions", chat("hi", 1, false)).statusCode()).isEqualTo(200);
  }

  @Test
  void badRequestsGetVllmStyleErrors() throws Exception {
    start(FakeVllmConfig.builder().latencyScale(0));
    HttpResponse<String> bad = post("/v1/chat/completions", "{\"messages\": [");
    assertThat(bad.statusCode()).isEqualTo(400);
    assertThat((String) Json.parseObject(bad.body()).get("message"))
        .startsWith("unexpected end of input");
    HttpResponse<String> wrongModel = post("/v1/completions",
        "{\"model\":\"other\",\"prompt\":\"p\"}");
    assertThat(wrongModel.statusCode()).isEqualTo(404);
    assertThat(client.send(HttpRequest.newBuilder(URI.create(server.baseUrl()
        + "/v1/completions")).GET().build(), HttpResponse.BodyHandlers.ofString()).statusCode())
        .isEqualTo(405);
  }

  @Test
  void clientDisconnectingMidStreamAbortsTheGeneration() throws Exception {
    start(FakeVllmConfig.builder().micros(0, 20_000)); // 20 ms per token
    HttpResponse<InputStream> r = client.send(HttpRequest.newBuilder(
            URI.create(server.baseUrl() + "/v1/chat/completions"))
        .POST(HttpRequest.BodyPublishers.ofString(chat("abc", 500, true))).build(),
        HttpResponse.BodyHandlers.ofInputStream());
    InputStream in = r.body();
    byte[] buf = new byte[64];
    assertThat(in.read(buf)).isPositive();
    assertThat(server.runningRequests()).isEqualTo(1);
    in.close();
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (server.abortedRequests() == 0 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(server.abortedRequests()).isEqualTo(1);
    assertThat(server.runningRequests()).isZero();
    assertThat(new String(buf, StandardCharsets.UTF_8)).startsWith("data: ");
  }

  @Test
  void smallKvCacheEvictsOldPrefixes() throws Exception {
    start(FakeVllmConfig.builder().latencyScale(0).numGpuBlocks(20));
    String a = "a".repeat(1000);
    String b = "b".repeat(1000);
    post("/v1/chat/completions", chat(a, 1, false));
    post("/v1/chat/completions", chat(b, 1, false)); // a's ~15 blocks are mostly evicted
    Map<?, ?> usage = (Map<?, ?>) Json.parseObject(post("/v1/chat/completions",
        chat(a, 1, false)).body()).get("usage");
    assertThat(((Map<?, ?>) usage.get("prompt_tokens_details")).get("cached_tokens"))
        .isEqualTo(0L);
  }

  @Test
  void configRefusesBadValues() {
    org.assertj.core.api.Assertions.assertThatThrownBy(
        () -> FakeVllmConfig.builder().latencyScale(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("latencyScale: -1.0 (expected: >= 0 and finite)");
    org.assertj.core.api.Assertions.assertThatThrownBy(
        () -> FakeVllmConfig.builder().numGpuBlocks(0))
        .hasMessage("numGpuBlocks: 0 (expected: > 0)");
  }

  @SuppressWarnings("unused")
  private static void drain(InputStream in) throws IOException {
    in.readAllBytes();
  }
}
