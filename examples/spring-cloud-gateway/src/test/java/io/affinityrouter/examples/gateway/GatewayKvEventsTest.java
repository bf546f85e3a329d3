package io.affinityrouter.examples.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.core.engine.FleetView;
import io.affinityrouter.examples.fakevllm.FakeVllmConfig;
import io.affinityrouter.examples.fakevllm.FakeVllmServer;
import io.affinityrouter.examples.gateway.request.InferenceRequestFilter;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The Spring gateway's KV sink and tokenizer: two fake vLLM backends that tokenize with Qwen 3's
 * real files (chat template included) and publish KV events, found through the simple discovery
 * client with {@code kv-events} metadata; {@code affinity-router.tokenizer-models} names the same
 * files. Conversations sent straight to one backend, which the gateway never saw, are then routed
 * by the gateway to the backend that cached them.
 *
 * <p>The model is {@code qwen3} under {@code $TOKENIZER_MODELS} or {@code ../../.tokenizer-models}
 * (which {@code .ci/run} fetches); without it the test fails when {@code CI=true}, and is skipped
 * elsewhere.
 */
@EnabledIf("modelPresentOrCi")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "affinity-router.scrape.interval=50ms"})
class GatewayKvEventsTest {
  static final String MODEL = "Qwen/Qwen3-8B";
  static final List<FakeVllmServer> BACKENDS = new CopyOnWriteArrayList<>();

  static boolean modelPresentOrCi() {
    return "true".equalsIgnoreCase(System.getenv("CI"))
        || Files.isRegularFile(modelDir().resolve("tokenizer.json"));
  }

  private static Path modelDir() {
    String p = System.getenv("TOKENIZER_MODELS");
    Path root = p == null || p.isBlank() ? Path.of("..", "..", ".tokenizer-models") : Path.of(p);
    return root.resolve("qwen3");
  }

  static Path model() {
    Path dir = modelDir();
    if (!Files.isRegularFile(dir.resolve("tokenizer.json"))) {
      throw new AssertionError(dir + "/tokenizer.json missing; .ci/run fetches it");
    }
    return dir.toAbsolutePath();
  }

  @DynamicPropertySource
  static void backends(DynamicPropertyRegistry registry) {
    Path dir = model();
    registry.add("affinity-router.tokenizer-models.[" + MODEL + "]", dir::toString);
    for (int i = 0; i < 2; i++) {
      FakeVllmServer s = FakeVllmServer.start(new InetSocketAddress("127.0.0.1", 0),
          FakeVllmConfig.builder().model(MODEL).latencyScale(0).kvEvents(0, 0)
              .tokenizerDir(dir).build());
      BACKENDS.add(s);
      String key = "spring.cloud.discovery.client.simple.instances.vllm[" + i + "]";
      registry.add(key + ".uri", s::baseUrl);
      registry.add(key + ".instance-id", () -> "vllm-" + BACKENDS.indexOf(s));
      registry.add(key + ".metadata.kv-events", () -> s.kvEventsUri().orElseThrow());
      registry.add(key + ".metadata.kv-events-replay", () -> s.kvEventsReplayUri().orElseThrow());
    }
  }

  @AfterAll
  static void stopBackends() {
    BACKENDS.forEach(FakeVllmServer::close);
  }

  @LocalServerPort
  int port;
  @Autowired
  FleetView fleet;
  @Autowired
  InferenceRequestFilter filter;

  final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();

  /** Requests posted, each served by one backend. */
  final AtomicLong sent = new AtomicLong();

  private HttpResponse<String> post(String base, String session, String body) throws Exception {
    sent.incrementAndGet();
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
        .timeout(Duration.ofSeconds(30)).header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (session != null) {
      b.header("x-session-id", session);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static String chat(String system, String user) {
    return "{\"model\":\"" + MODEL + "\",\"max_tokens\":2,\"messages\":["
        + "{\"role\":\"system\",\"content\":\"" + system + "\"},"
        + "{\"role\":\"user\",\"content\":\"" + user + "\"}]}";
  }

  /** Every batch each backend published applied by the gateway's subscriptions. */
  private boolean allApplied() {
    for (int i = 0; i < BACKENDS.size(); i++) {
      var stats = fleet.kvEventStats().get("vllm-" + i);
      long published = BACKENDS.get(i).kvEventBatchesPublished();
      if (stats == null || published == 0 || stats.batches() < published) {
        return false;
      }
    }
    return true;
  }

  @Test
  void conversationsTheGatewayNeverSawGoWhereTheEngineCachedThem() throws Exception {
    await("both backends scraped with the model", () -> fleet.replicas().size() == 2
        && fleet.replicas().stream().allMatch(r -> r.health() == ReplicaHealth.HEALTHY
            && r.models().containsKey(MODEL)), () -> { });
    long[] lastNudge = {System.nanoTime() - Duration.ofSeconds(1).toNanos()};
    await("every warm-up batch applied", this::allApplied, () -> {
      // a batch published before the subscriber connected is lost; the next one starts a replay
      if (System.nanoTime() - lastNudge[0] < Duration.ofMillis(500).toNanos()) {
        return;
      }
      lastNudge[0] = System.nanoTime();
      for (int i = 0; i < BACKENDS.size(); i++) {
        FakeVllmServer s = BACKENDS.get(i);
        var stats = fleet.kvEventStats().get("vllm-" + i);
        if (s.kvEventBatchesPublished() == 0 || stats == null
            || stats.batches() < s.kvEventBatchesPublished()) {
          try {
            post(s.baseUrl(), null, chat("warm-up " + System.nanoTime(), "x ".repeat(60)));
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        }
      }
    });

    for (int c = 0; c < 4; c++) {
      FakeVllmServer holder = BACKENDS.get(c % 2);
      // a long shared prefix: its cached blocks outweigh any load the scrapes show (a busy machine)
      String system = ("Conversation " + c + ": you review contracts clause by clause. ")
          .repeat(150);
      assertThat(post(holder.baseUrl(), null, chat(system, "Read clause one.")).statusCode())
          .isEqualTo(200);
      await("the backend's batch applied", this::allApplied, () -> { });
      // a backend counts a request finished just after its response is written
      await("every request sent counted", () -> finished() == sent.get(), () -> { });

      long before = holder.finishedRequests();
      HttpResponse<String> r = post("http://127.0.0.1:" + port, "s-" + c,
          chat(system, "Read clause one. Then clause two."));
      assertThat(r.statusCode()).isEqualTo(200);
      await("the routed request counted", () -> finished() == sent.get(), () -> { });
      assertThat(holder.finishedRequests()).as("conversation %d served by the backend holding it",
          c).isEqualTo(before + 1);
    }
    assertThat(filter.tokenizeFallbacks()).isZero();
  }

  /** Requests the backends finished, all of them. */
  private static long finished() {
    return BACKENDS.stream().mapToLong(FakeVllmServer::finishedRequests).sum();
  }

  private static void await(String what, BooleanSupplier condition, Runnable nudge)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for: " + what);
      }
      nudge.run();
      Thread.sleep(20);
    }
  }
}
