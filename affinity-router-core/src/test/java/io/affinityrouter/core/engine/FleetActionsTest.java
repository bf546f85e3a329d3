package io.affinityrouter.core.engine;

import static io.affinityrouter.core.engine.EngineServer.fixture;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.Replica;
import io.affinityrouter.core.engine.EngineActionResult.Status;
import io.affinityrouter.core.engine.EngineServer.Answer;
import io.affinityrouter.core.engine.EngineServer.Received;
import io.affinityrouter.spi.ReplicaEndpoint;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * vLLM's sleep-mode actions, SGLang's memory release and the router's wake signal, against a real
 * server.
 */
class FleetActionsTest {
  private final EngineServer vllm = new EngineServer().metrics(fixture(EngineServer.VLLM_V1));
  private final EngineServer sglang = new EngineServer().metrics(fixture(EngineServer.SGLANG));
  private FleetView fleet = FleetView.builder().scrapeTimeout(java.time.Duration.ofSeconds(10))
      .endpoint(ReplicaEndpoint.builder("v", vllm.uri()).engine(ReplicaEndpoint.Engine.VLLM).build())
      .endpoint(ReplicaEndpoint.builder("s", sglang.uri()).build())
      .build();

  @AfterEach
  void tearDown() {
    fleet.close();
    vllm.close();
    sglang.close();
  }

  private static EngineActionResult get(java.util.concurrent.CompletionStage<EngineActionResult> s)
      throws Exception {
    return s.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void wakeRequestsAreSentOffTheCallerThreadAndDeduplicatedWhileInFlight() throws Exception {
    vllm.answer("/wake_up", Answer.held());
    Replica v = fleet.replicas().get(0);
    var listener = fleet.wakeListener();
    long start = System.nanoTime();
    for (int i = 0; i < 20; i++) {
      listener.onWakeRequested(v, "m"); // returns while the server holds the first call
    }
    assertThat(System.nanoTime() - start).as("never waits for the server")
        .isLessThan(TimeUnit.SECONDS.toNanos(5));
    EngineServer.await("the wake reached the server", () -> vllm.count("/wake_up") == 1);
    var pending = fleet.wakeUp("v", List.of()).toCompletableFuture();
    assertThat(pending).as("joins the wake in flight").isNotDone();
    vllm.answer("/wake_up", Answer.ok(""));
    vllm.release();
    assertThat(pending.get(10, TimeUnit.SECONDS).status()).isEqualTo(Status.DONE);
    assertThat(vllm.received).filteredOn(r -> r.path().equals("/wake_up"))
        .containsExactly(new Received("POST", "/wake_up", null));
    assertThat(fleet.wakeRequestsSent()).isEqualTo(1);

    listener.onWakeRequested(v, "m");
    EngineServer.await("a later wake is sent again", () -> vllm.count("/wake_up") == 2);
  }

  @Test
  void sleepWakeWithTagsAndIsSleepingUseVllmsPathsAndParameters() throws Exception {
    vllm.answer("/sleep", Answer.ok("")).answer("/wake_up", Answer.ok(""))
        .answer("/is_sleeping", Answer.ok("{\"is_sleeping\":true}"));
    assertThat(get(fleet.sleep("v", 2)).isDone()).isTrue();
    assertThat(get(fleet.wakeUp("v", List.of("weights", "kv_cache"))).isDone()).isTrue();
    EngineActionResult asleep = get(fleet.isSleeping("v"));
    assertThat(asleep.sleeping()).contains(true);
    assertThat(asleep.httpStatus()).hasValue(200);
    assertThat(get(fleet.sleep("v", 1, FleetView.SleepMode.ABORT)).isDone()).isTrue();
    assertThat(get(fleet.sleep("v", 1, FleetView.SleepMode.KEEP)).isDone()).isTrue();
    assertThat(vllm.received).containsExactly(
        new Received("POST", "/sleep", "level=2&mode=wait"),
        new Received("POST", "/wake_up", "tags=weights&tags=kv_cache"),
        new Received("GET", "/is_sleeping", null),
        new Received("POST", "/sleep", "level=1&mode=abort"),
        new Received("POST", "/sleep", "level=1&mode=keep"));
    assertThatThrownBy(() -> fleet.sleep("v", 3)).hasMessage("level: 3 (expected: 1 or 2)");
  }

  @Test
  void sglangReleasesMemoryOnlyWhenIdleAndItsModelsSleepUntilResumed() throws Exception {
    fleet.scrapeNow().toCompletableFuture().get(10, TimeUnit.SECONDS); // tells SGLang by its names
    sglang.answer("/release_memory_occupation", Answer.ok("null"))
        .answer("/resume_memory_occupation", Answer.ok("null"));
    // the docs capture shows 162 running requests: SGLang's scheduler would assert, so no call
    EngineActionResult busy = get(fleet.sleep("s", 1));
    assertThat(busy.status()).isEqualTo(Status.FAILED);
    assertThat(busy.detail()).contains("162 running");
    assertThat(get(fleet.sleep("s", 2, FleetView.SleepMode.ABORT)).status())
        .isEqualTo(Status.UNSUPPORTED);
    assertThat(sglang.count("/release_memory_occupation")).isZero();

    sglang.metrics(fixture("sglang-0.5.16-llmd-router-hicache.prom")); // an idle server
    fleet.scrapeNow().toCompletableFuture().get(10, TimeUnit.SECONDS);
    String model = "Qwen/Qwen3-0.6B";
    assertThat(fleet.replica("s").orElseThrow().models()).containsEntry(model,
        io.affinityrouter.ModelState.ACTIVE);
    assertThat(get(fleet.sleep("s", 1)).isDone()).isTrue();
    assertThat(fleet.replica("s").orElseThrow().models()).as("at once, not at the next scrape")
        .containsEntry(model, io.affinityrouter.ModelState.SLEEPING);
    fleet.scrapeNow().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(fleet.replica("s").orElseThrow().models()).as("SGLang reports no sleep state")
        .containsEntry(model, io.affinityrouter.ModelState.SLEEPING);
    assertThat(get(fleet.isSleeping("s")).status()).isEqualTo(Status.UNSUPPORTED);

    assertThat(get(fleet.wakeUp("s", List.of("weights", "kv_cache"))).isDone()).isTrue();
    assertThat(fleet.replica("s").orElseThrow().models()).containsEntry(model,
        io.affinityrouter.ModelState.ACTIVE);
    assertThat(sglang.received).filteredOn(r -> r.path().endsWith("_memory_occupation"))
        .containsExactly(new Received("POST", "/release_memory_occupation", null),
            new Received("POST", "/resume_memory_occupation", null));
    assertThat(sglang.bodies).contains("{}", "{\"tags\":[\"weights\",\"kv_cache\"]}");

    sglang.answer("/release_memory_occupation", Answer.status(400));
    EngineActionResult refused = get(fleet.sleep("s", 1));
    assertThat(refused.status()).isEqualTo(Status.FAILED);
    assertThat(refused.httpStatus()).hasValue(400);
    assertThat(fleet.replica("s").orElseThrow().models()).as("a refused release changes nothing")
        .containsEntry(model, io.affinityrouter.ModelState.ACTIVE);
  }

  @Test
  void unsupportedUnknownAndFailedAreValues() throws Exception {
    fleet.scrapeNow().toCompletableFuture().get(10, TimeUnit.SECONDS); // tells SGLang by its names
    assertThat(get(fleet.wakeUp("s", List.of())).status()).as("404: no such endpoint")
        .isEqualTo(Status.UNSUPPORTED);
    assertThat(sglang.count("/wake_up")).isZero();
    assertThat(get(fleet.sleep("nope", 1)).status()).isEqualTo(Status.UNKNOWN_REPLICA);
    assertThat(get(fleet.isSleeping("v")).status()).as("404: no dev mode")
        .isEqualTo(Status.UNSUPPORTED);
    vllm.answer("/wake_up", Answer.status(500));
    EngineActionResult failed = get(fleet.wakeUp("v", List.of()));
    assertThat(failed.status()).isEqualTo(Status.FAILED);
    assertThat(failed.httpStatus()).hasValue(500);
    vllm.close();
    assertThat(get(fleet.wakeUp("v", List.of())).status()).isEqualTo(Status.FAILED);
  }

  @Test
  void actionsInFlightCompleteClosedOnClose() throws Exception {
    vllm.answer("/wake_up", Answer.held());
    var pending = fleet.wakeUp("v", List.of()).toCompletableFuture();
    EngineServer.await("the wake reached the server", () -> vllm.count("/wake_up") == 1);
    fleet.close();
    assertThat(pending.get(10, TimeUnit.SECONDS).status()).isEqualTo(Status.CLOSED);
    assertThat(get(fleet.sleep("v", 1)).status()).isEqualTo(Status.CLOSED);
    fleet.wakeListener().onWakeRequested(fleet.replicas().get(0), "m"); // never throws
  }
}
