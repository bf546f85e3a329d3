package io.affinityrouter.core.engine;

import static io.affinityrouter.core.engine.EngineServer.fixture;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Router;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.core.ReadmeSnippets;
import io.affinityrouter.core.engine.EngineServer.Answer;
import io.affinityrouter.core.engine.EngineServer.Received;
import io.affinityrouter.core.lifecycle.LifecycleState;
import io.affinityrouter.core.lifecycle.ModelActuator;
import io.affinityrouter.core.lifecycle.ModelClaim;
import io.affinityrouter.core.lifecycle.ModelLifecycle;
import io.affinityrouter.spi.ReplicaEndpoint;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The README's claims quickstart, over a fleet view of two engines serving vLLM metrics. */
class LifecycleQuickstartTest {
  private static final String START = "// --- README lifecycle start ---";
  private static final String END = "// --- README lifecycle end ---";
  private static final String MODEL = "Qwen/Qwen3-0.6B";

  private final EngineServer engine0 = engine();
  private final EngineServer engine1 = engine();

  private static EngineServer engine() {
    return new EngineServer().metrics(fixture(EngineServer.VLLM_V1))
        .answer("/sleep", Answer.ok("")).answer("/wake_up", Answer.ok(""));
  }

  @AfterEach
  void tearDown() {
    engine0.close();
    engine1.close();
  }

  @Test
  void lifecycleQuickstart() throws Exception {
    FleetView fleet = FleetView.builder()
        .endpoint(ReplicaEndpoint.of("vllm-0", engine0.uri().toString()))
        .endpoint(ReplicaEndpoint.of("vllm-1", engine1.uri().toString()))
        .build().start();
    fleet.firstSnapshot().toCompletableFuture().get(10, TimeUnit.SECONDS);
    // --- README lifecycle start ---
    ModelLifecycle lifecycle = ModelLifecycle.builder()
        .claim(ModelClaim.builder("Qwen/Qwen3-0.6B").gpuMemoryBytes(40L << 30) // weights + KV
            .minAwake(1).maxAwake(4).idleTimeout(Duration.ofMinutes(5)).build())
        .fleet(fleet)                        // its replicas, and its sleep mode to act through
        .gpuMemoryBytes(80L << 30)           // per GPU group (by default, each replica)
        .build().start();                    // a round every second
    Router router = AffinityRouter.builder()
        .addListener(lifecycle.listener())   // in place of fleet.wakeListener()
        .build();
    // --- README lifecycle end ---
    try {
      EngineServer.await("the lifecycle leads and sees both copies", () -> {
        LifecycleState s = lifecycle.state();
        return s.leader() && s.models().get(0).awake() == 2;
      });
      assertThat(lifecycle.state().models().get(0).minAwake()).isEqualTo(1);
      // Both copies were used just now (the lifecycle started): nothing to do for 5 minutes.
      assertThat(lifecycle.runOnce().toCompletableFuture().get(10, TimeUnit.SECONDS)).isEmpty();

      // The actuator the lifecycle acts through is the fleet view's vLLM sleep mode.
      assertThat(ModelActuator.of(fleet).sleep("vllm-1", MODEL, 1).toCompletableFuture()
          .get(10, TimeUnit.SECONDS)).isEqualTo(ModelActuator.Outcome.DONE);
      assertThat(engine1.received).contains(new Received("POST", "/sleep", "level=1&mode=wait"));
      assertThat(ModelActuator.of(fleet).wake("vllm-1", MODEL).toCompletableFuture()
          .get(10, TimeUnit.SECONDS)).isEqualTo(ModelActuator.Outcome.DONE);
      assertThat(engine1.count("/wake_up")).isEqualTo(1);
      assertThat(ModelActuator.of(fleet).wake("no-such-replica", MODEL).toCompletableFuture()
          .get(10, TimeUnit.SECONDS)).isEqualTo(ModelActuator.Outcome.FAILED);
    } finally {
      lifecycle.close();
      router.close();
      fleet.close();
    }
  }

  @Test
  void readmeShowsThisQuickstart() throws IOException {
    assertThat(ReadmeSnippets.inReadme("## Models that sleep: claims"))
        .isEqualTo(ReadmeSnippets.inTest(Path.of(
            "src/test/java/io/affinityrouter/core/engine/LifecycleQuickstartTest.java"), START,
            END));
  }
}
