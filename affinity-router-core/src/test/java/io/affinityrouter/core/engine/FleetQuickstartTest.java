package io.affinityrouter.core.engine;

import static io.affinityrouter.core.engine.EngineServer.fixture;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.RequestLease;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.core.ReadmeSnippets;
import io.affinityrouter.spi.ReplicaEndpoint;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The README's fleet-view quickstart, run against two engines serving captured vLLM metrics. */
class FleetQuickstartTest {
  private static final String START = "// --- README fleet start ---";
  private static final String END = "// --- README fleet end ---";

  private final EngineServer engine0 = new EngineServer().metrics(fixture(EngineServer.VLLM_V1));
  private final EngineServer engine1 = new EngineServer().metrics(fixture(EngineServer.VLLM_V1));

  @AfterEach
  void tearDown() {
    engine0.close();
    engine1.close();
  }

  @Test
  void fleetQuickstart() throws Exception {
    URI vllm0 = engine0.uri();
    URI vllm1 = engine1.uri();
    RoutingRequest request = RoutingRequest.builder().model("Qwen/Qwen3-0.6B")
        .sessionId("agent-42").promptTokens(new int[2048]).build();
    String target = null;
    // --- README fleet start ---
    FleetView fleet = FleetView.builder()
        .endpoint(ReplicaEndpoint.builder("vllm-0", vllm0)          // http://10.0.0.7:8000
            .engine(ReplicaEndpoint.Engine.VLLM).build())
        .endpoint(ReplicaEndpoint.of("vllm-1", vllm1.toString()))   // or .discovery(...)
        .build();
    Router router = AffinityRouter.builder()
        .addListener(fleet.wakeListener())                          // POST /wake_up when asleep
        .build();
    fleet.addSnapshotListener(router::refresh)                      // held requests see new room
        .addRemovalListener(router::retire)                         // pods the discovery drops
        .kvEvents(router.cacheEvents())                             // endpoints with a kvEventsUri
        .start();                                                   // scrapes /metrics every 100 ms
    fleet.firstSnapshot().toCompletableFuture().get(10, TimeUnit.SECONDS);   // readiness

    RoutingDecision decision = router.select(request, fleet.replicas());
    if (decision.isRouted()) {
      try (RequestLease lease = decision.lease()) {
        target = decision.replica().address();                      // forward the request there
      }                                        // refused? fleet.reportFailure(replica id, error)
    }
    fleet.close();
    router.close();
    // --- README fleet end ---
    assertThat(decision.isRouted()).as(decision.toString()).isTrue();
    assertThat(target).isIn(vllm0.toString(), vllm1.toString());
    assertThat(engine0.count("/metrics") + engine1.count("/metrics")).isPositive();
  }

  @Test
  void readmeShowsThisQuickstart() throws IOException {
    assertThat(ReadmeSnippets.inReadme("### With real engines: the fleet view"))
        .isEqualTo(ReadmeSnippets.inTest(Path.of(
            "src/test/java/io/affinityrouter/core/engine/FleetQuickstartTest.java"), START, END));
  }
}
