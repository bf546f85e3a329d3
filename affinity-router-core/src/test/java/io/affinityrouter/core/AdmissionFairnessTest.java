package io.affinityrouter.core;

import static io.affinityrouter.core.Prompts.tokens;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A heavy tenant cannot starve a light one: while both have requests held, the tokens admitted for
 * each differ by at most deficit round-robin's bound, one quantum plus two of the largest request
 * ({@link AdmissionQueue#QUANTUM_TOKENS} + 2 × the largest), whatever their arrival order or
 * request sizes.
 */
class AdmissionFairnessTest {

  private record Held(String tenant, long tokens, CompletableFuture<RoutingDecision> future) {}

  @Test
  void equalRequestsShareAdmissionsEvenWhenTheHeavyTenantArrivedFirst() {
    check(200, 1_000, 20, 1_000);
  }

  @Test
  void fairnessIsInTokensNotInRequests() {
    check(400, 500, 20, 8_000);
  }

  @Test
  void aLightTenantWithLongPromptsIsNotStarvedByManyShortOnes() {
    check(3_000, 100, 10, 30_000);
  }

  private static void check(int heavyCount, int heavyPrompt, int lightCount, int lightPrompt) {
    TestClock clock = new TestClock();
    Router router = AffinityRouter.builder().clock(clock).random(new SplittableRandom(1))
        .holdScheduler(new ManualScheduler(clock)).holdQueue(10_000, 64L << 20, Duration.ofSeconds(5))
        .maxInFlightRequests(1).build();
    List<Replica> fleet = Prompts.replicas(1);
    RoutingDecision running = router.select(request("x", tokens(0, 16)), fleet);
    List<Held> held = new ArrayList<>();
    for (int i = 0; i < heavyCount; i++) {
      held.add(submit(router, fleet, "heavy", heavyPrompt, i));
    }
    for (int i = 0; i < lightCount; i++) {
      held.add(submit(router, fleet, "light", lightPrompt, 100_000 + i));
    }
    ArrayDeque<Held> waiting = new ArrayDeque<>(held);
    long heavyTokens = 0;
    long lightTokens = 0;
    long bound = AdmissionQueue.QUANTUM_TOKENS + 2 * (Math.max(heavyPrompt, lightPrompt) + 100L);
    long worst = 0;
    int lightLeft = lightCount;
    while (lightLeft > 0) {
      running.lease().close(); // one slot frees: exactly one held request is admitted
      Held admitted = null;
      for (Held h : waiting) {
        if (h.future().isDone()) {
          assertThat(admitted).as("one admission per freed slot").isNull();
          admitted = h;
        }
      }
      assertThat(admitted).isNotNull();
      waiting.remove(admitted);
      running = admitted.future().join();
      assertThat(running.isRouted()).isTrue();
      if (admitted.tenant().equals("heavy")) {
        heavyTokens += admitted.tokens();
      } else {
        lightTokens += admitted.tokens();
        lightLeft--;
      }
      if (lightLeft > 0) { // both still backlogged
        worst = Math.max(worst, Math.abs(heavyTokens - lightTokens));
      }
    }
    assertThat(worst).isLessThanOrEqualTo(bound);
    // The light tenant finished long before the heavy one: it was not served last.
    assertThat(waiting).allSatisfy(h -> assertThat(h.tenant()).isEqualTo("heavy"));
    assertThat(waiting).isNotEmpty();
  }

  private static Held submit(Router router, List<Replica> fleet, String tenant, int prompt,
      long seed) {
    CompletableFuture<RoutingDecision> f =
        router.selectAsync(request(tenant, tokens(seed, prompt)), fleet).toCompletableFuture();
    assertThat(f).isNotDone();
    return new Held(tenant, prompt + 100L, f);
  }

  private static RoutingRequest request(String tenant, int[] prompt) {
    return RoutingRequest.builder().tenant(tenant).promptTokens(prompt).expectedOutputTokens(100)
        .build();
  }
}
