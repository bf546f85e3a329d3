package io.affinityrouter.examples.fakevllm;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.Router;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.core.engine.EngineTokenizer;
import io.affinityrouter.core.engine.FleetView;
import io.affinityrouter.spi.ChatMessage;
import io.affinityrouter.spi.ReplicaEndpoint;
import io.affinityrouter.spi.TokenizeRequest;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The fake engine's {@code /tokenize} and KV events through the core's own tokenizer client,
 * subscriber, fleet view and router: a router that never routed a prompt finds the engine's blocks
 * for it, token for token.
 */
class FakeVllmKvEventsTest {
  private static final String MODEL = "test-model";
  private final HttpClient client = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).build();
  private FakeVllmServer server;
  private FleetView fleet;

  @AfterEach
  void stop() {
    if (fleet != null) {
      fleet.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private void chat(String system, String user) throws Exception {
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(
        URI.create(server.baseUrl() + "/v1/chat/completions"))
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + MODEL + "\",\"max_tokens\":1,"
            + "\"messages\":[{\"role\":\"system\",\"content\":\"" + system + "\"},"
            + "{\"role\":\"user\",\"content\":\"" + user + "\"}]}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
  }

  private Router router;
  private EngineTokenizer tokenizer;

  private void start(FakeVllmConfig.Builder config) throws Exception {
    server = FakeVllmServer.start(new InetSocketAddress("127.0.0.1", 0),
        config.model(MODEL).latencyScale(0).kvEvents(0, 0).build());
    ReplicaEndpoint endpoint = ReplicaEndpoint.builder("vllm-0", URI.create(server.baseUrl()))
        .engine(ReplicaEndpoint.Engine.VLLM).model(MODEL)
        .kvEventsUri(URI.create(server.kvEventsUri().orElseThrow()))
        .kvEventsReplayUri(URI.create(server.kvEventsReplayUri().orElseThrow())).build();
    router = AffinityRouter.builder().build();
    fleet = FleetView.builder().endpoint(endpoint).build().kvEvents(router.cacheEvents());
    fleet.scrapeNow().toCompletableFuture().get(30, TimeUnit.SECONDS);
    fleet.start();
    tokenizer = EngineTokenizer.builder(() -> List.of(endpoint)).build();
    // a SUB socket misses what precedes its connect: new one-block prompts until one arrives
    await("the subscriber's first event", () -> {
      chat("w" + System.nanoTime(), "x".repeat(80));
      return fleet.kvEventStats().get("vllm-0").events() > 0;
    });
  }

  private RoutingRequest tokenized(String system, String user) throws Exception {
    int[] tokens = tokenizer.tokenize(TokenizeRequest.chat(MODEL,
        List.of(ChatMessage.system(system), ChatMessage.user(user)))).get(30, TimeUnit.SECONDS);
    return RoutingRequest.builder().model(MODEL).promptTokens(tokens).build();
  }

  /** The blocks of {@code request} the router finds on the replica (it routes nothing). */
  private int matched(RoutingRequest request) {
    return matched(request, fleet.replicas());
  }

  /** As above, against {@code replicas} (a snapshot taken while the model was awake). */
  private int matched(RoutingRequest request, List<io.affinityrouter.Replica> replicas) {
    RoutingDecision d = router.select(request, replicas);
    assertThat(d.isRouted()).as(d.explain()).isTrue();
    d.lease().close();
    return d.matchedBlocks();
  }

  private static void await(String what, java.util.concurrent.Callable<Boolean> condition)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30); // time is not the subject
    while (!condition.call()) {
      assertThat(System.nanoTime() - deadline).as("timed out waiting for " + what).isNegative();
      Thread.sleep(10);
    }
  }

  @Test
  void aRouterFindsTheEnginesBlocksForTheTokensOfTheTokenizeEndpoint() throws Exception {
    start(FakeVllmConfig.builder());
    String system = "You are a careful analyst. ".repeat(20);
    String user = "Summarize the quarter in three lines.";
    RoutingRequest request = tokenized(system, user);
    int blocks = request.promptTokenCount() / 16;
    assertThat(blocks).isGreaterThan(8);
    assertThat(matched(request)).isZero();

    chat(system, user);
    await("the prompt's blocks", () -> matched(request) == blocks);
    RoutingRequest longer = RoutingRequest.builder().model(MODEL).promptTokens(
        tokenized(system, user + " And the outlook.").promptTokens()).build();
    assertThat(matched(longer)).as("a longer prompt matches the shared prefix").isEqualTo(blocks);
    assertThat(fleet.kvEventStats().get("vllm-0").gaps()).isZero();
  }

  @Test
  void blocksTheEngineEvictsOrDropsAsleepStopMatching() throws Exception {
    start(FakeVllmConfig.builder().numGpuBlocks(8));
    RoutingRequest request = tokenized("s", "alpha ".repeat(30)); // 3 blocks of 64 characters
    chat("s", "alpha ".repeat(30));
    await("the prompt's blocks", () -> matched(request) == 3);

    for (int i = 0; i < 3; i++) { // 9 blocks of other prompts through 8 blocks of KV
      chat("s", ("other" + i + " ").repeat(30));
    }
    await("the evicted blocks removed", () -> matched(request) == 0);

    chat("s", "alpha ".repeat(30));
    await("the blocks stored again", () -> matched(request) == 3);
    // the index is the subject, not the model's state: a scrape may show it asleep first
    List<io.affinityrouter.Replica> awake = fleet.replicas();
    long before = fleet.kvEventStats().get("vllm-0").events();
    HttpResponse<String> r = client.send(HttpRequest.newBuilder(
        URI.create(server.baseUrl() + "/sleep?level=2"))
        .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    // a select records its own prediction of the prompt's blocks: one routed while the clear is
    // applied would keep them matched, so the clear is seen before the router is asked again
    await("the clear received", () -> fleet.kvEventStats().get("vllm-0").events() > before);
    await("all blocks cleared", () -> matched(request, awake) == 0);
  }
}
