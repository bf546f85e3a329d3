package io.affinityrouter.core;

import static io.affinityrouter.core.Prompts.anonymous;
import static io.affinityrouter.core.Prompts.concat;
import static io.affinityrouter.core.Prompts.replicas;
import static io.affinityrouter.core.Prompts.session;
import static io.affinityrouter.core.Prompts.tokens;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.ModelState;
import io.affinityrouter.RepinCause;
import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.ReplicaFilter;
import io.affinityrouter.spi.RoutingListener;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class RouterTest {
  private final TestClock clock = new TestClock();

  private Router router() {
    return AffinityRouter.builder().clock(clock).random(new SplittableRandom(1)).build();
  }

  @Test
  void firstTurnClaimsAndLaterTurnsStay() {
    Router router = router();
    List<Replica> fleet = replicas(4);
    int[] context = tokens(1, 2000);
    RoutingDecision first = router.select(session("s", context), fleet);
    assertThat(first.reason()).isEqualTo(RoutingReason.SESSION_CLAIMED);
    assertThat(first.bindingGeneration()).isPositive();
    first.lease().complete(50);
    for (int turn = 0; turn < 5; turn++) {
      context = concat(context, tokens(100 + turn, 300));
      RoutingDecision d = router.select(session("s", context), fleet);
      assertThat(d.reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
      assertThat(d.replica()).isEqualTo(first.replica());
      assertThat(d.bindingGeneration()).isEqualTo(first.bindingGeneration());
      assertThat(d.matchedBlocks()).isGreaterThan(0);
      assertThat(d.scores().affinity()).isTrue();
      d.lease().close();
    }
  }

  @Test
  void sharedPrefixGoesWhereItIsCached() {
    Router router = router();
    List<Replica> fleet = replicas(8);
    int[] system = tokens(7, 4096);
    RoutingDecision a = router.select(anonymous(concat(system, tokens(8, 64))), fleet);
    a.lease().close();
    RoutingDecision b = router.select(anonymous(concat(system, tokens(9, 64))), fleet);
    assertThat(b.replica()).isEqualTo(a.replica());
    assertThat(b.matchedBlocks()).isEqualTo(4096 / 16);
    assertThat(b.scores().cachedFraction()).isGreaterThan(0.9);
  }

  @Test
  void cachedReplicaYieldsWhenItsQueueCostsMoreThanRecompute() {
    Router router = router();
    int[] system = tokens(7, 2048);
    List<Replica> fleet = replicas(2);
    RoutingDecision a = router.select(anonymous(concat(system, tokens(1, 32))), fleet);
    a.lease().close();
    String cached = a.replica().id();
    // The cached replica now reports a deep prefill queue: 20 waiting requests of ~1k tokens.
    List<Replica> loaded = new ArrayList<>();
    for (Replica r : fleet) {
      loaded.add(r.id().equals(cached)
          ? r.withLoad(ReplicaLoad.builder().waitingRequests(20).runningRequests(10).build())
          : r);
    }
    RoutingDecision b = router.select(anonymous(concat(system, tokens(2, 32))), loaded);
    assertThat(b.replica().id()).isNotEqualTo(cached);
    RoutingDecision c = router.select(anonymous(concat(system, tokens(3, 32))), fleet);
    assertThat(c.replica().id()).isEqualTo(cached); // without the queue, the cache wins again
  }

  @Test
  void theEngineProfileSetsTheCostModelsFigures() {
    int[] prompt = tokens(3, 2048);
    RoutingDecision byDefault = router().select(anonymous(prompt), replicas(1));
    EngineProfile d = AffinityRouter.Builder.DEFAULT_ENGINE_PROFILE;
    assertThat(byDefault.scores().prefillSeconds()).isCloseTo( // an idle replica: no slowdown
        2048 / d.prefillTokensPerSecond() + d.attentionSeconds() * 2048 * 1024,
        org.assertj.core.api.Assertions.within(1e-9));
    Router linear = AffinityRouter.builder().clock(clock).random(new SplittableRandom(1))
        .engineProfile(d.withPrefillTokensPerSecond(20_000).withAttentionSeconds(0)).build();
    RoutingDecision slow = linear.select(anonymous(prompt), replicas(1));
    assertThat(slow.scores().prefillSeconds())
        .isCloseTo(2048 / 20_000.0, org.assertj.core.api.Assertions.within(1e-9));
  }

  @Test
  void aHigherRecomputeWeightKeepsThePrefixWhereTheQueueAloneWouldMoveIt() {
    int[] system = tokens(7, 2048);
    for (double weight : new double[] {1.0, 4.0}) {
      Router router = AffinityRouter.builder().clock(clock).random(new SplittableRandom(1))
          .recomputeWeight(weight).build();
      List<Replica> fleet = replicas(2);
      RoutingDecision a = router.select(anonymous(concat(system, tokens(1, 32))), fleet);
      a.lease().close();
      List<Replica> loaded = new ArrayList<>();
      for (Replica r : fleet) {
        loaded.add(r.equals(a.replica())
            ? r.withLoad(ReplicaLoad.builder().waitingRequests(3).build()) : r);
      }
      RoutingDecision b = router.select(anonymous(concat(system, tokens(2, 32))), loaded);
      if (weight == 1.0) {
        assertThat(b.replica().id()).isNotEqualTo(a.replica().id()); // 3k queued > 2k recompute
      } else {
        assertThat(b.replica().id()).isEqualTo(a.replica().id());
        assertThat(b.scores().estimatedTtftSeconds()) // the estimate itself stays unweighted
            .isCloseTo(b.scores().queueSeconds() + b.scores().prefillSeconds(),
                org.assertj.core.api.Assertions.within(1e-12));
      }
    }
  }

  @Test
  void aBoundReplicaAFilterRefusesIsRepinnedForThatCause() {
    java.util.Set<String> refused = java.util.concurrent.ConcurrentHashMap.newKeySet();
    Router router = AffinityRouter.builder().clock(clock)
        .addFilter(new io.affinityrouter.spi.ReplicaFilter() {
          @Override
          public String name() {
            return "zone";
          }

          @Override
          public boolean accepts(io.affinityrouter.RoutingRequest request, Replica replica) {
            return !refused.contains(replica.id());
          }
        }).build();
    List<Replica> fleet = replicas(3);
    RoutingDecision first = router.select(session("f", tokens(4, 512)), fleet);
    first.lease().close();
    refused.add(first.replica().id());
    RoutingDecision moved = router.select(session("f", tokens(4, 512)), fleet);
    assertThat(moved.reason()).isEqualTo(RoutingReason.SESSION_REPINNED);
    assertThat(moved.repinCause()).contains(RepinCause.REPLICA_FILTERED);
    assertThat(moved.replica().id()).isNotEqualTo(first.replica().id());
    moved.lease().close();
  }

  @Test
  void unhealthyBoundReplicaIsRepinnedAndTheListenerHearsIt() {
    List<String> repins = new ArrayList<>();
    Router router = AffinityRouter.builder().clock(clock).addListener(new RoutingListener() {
      @Override
      public void onRepin(BindingKey key, String from, String to, RepinCause cause) {
        repins.add(key.sessionId() + ":" + from + "->" + to + ":" + cause);
      }
    }).build();
    List<Replica> fleet = replicas(3);
    int[] context = tokens(3, 512);
    RoutingDecision first = router.select(session("s", context), fleet);
    first.lease().close();
    List<Replica> degraded = new ArrayList<>(fleet);
    int i = degraded.indexOf(first.replica());
    degraded.set(i, first.replica().withHealth(ReplicaHealth.UNHEALTHY));
    RoutingDecision moved = router.select(session("s", context), degraded);
    assertThat(moved.reason()).isEqualTo(RoutingReason.SESSION_REPINNED);
    assertThat(moved.repinCause()).contains(RepinCause.REPLICA_UNHEALTHY);
    assertThat(moved.previousReplicaId()).contains(first.replica().id());
    assertThat(moved.bindingGeneration()).isGreaterThan(first.bindingGeneration());
    assertThat(repins).containsExactly(
        "s:" + first.replica().id() + "->" + moved.replica().id() + ":REPLICA_UNHEALTHY");
    moved.lease().close();
    // The next turn stays on the new replica even once the old one is healthy again.
    RoutingDecision after = router.select(session("s", context), fleet);
    assertThat(after.replica()).isEqualTo(moved.replica());
    assertThat(after.reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
  }

  @Test
  void goneBoundReplicaIsRepinnedButOneAtItsLimitIsNot() {
    Router router = router();
    List<Replica> fleet = replicas(3);
    int[] context = tokens(3, 512);
    RoutingDecision first = router.select(session("s", context), fleet);
    first.lease().close();
    List<Replica> without = new ArrayList<>(fleet);
    without.remove(first.replica());
    RoutingDecision gone = router.select(session("s", context), without);
    assertThat(gone.repinCause()).contains(RepinCause.REPLICA_GONE);
    gone.lease().close();
    // Fill the new replica to its limit with another request: the turn is refused, not moved.
    List<Replica> limited = new ArrayList<>();
    for (Replica r : without) {
      limited.add(r.toBuilder().maxInFlightRequests(1).build());
    }
    Replica bound = limitedOf(limited, gone.replica().id());
    RoutingDecision other = router.select(anonymous(tokens(99, 64)), List.of(bound));
    assertThat(other.replica().id()).isEqualTo(bound.id());
    RoutingDecision full = router.select(session("s", context), limited);
    assertThat(full.isRouted()).isFalse();
    assertThat(full.reason()).isEqualTo(RoutingReason.ALL_AT_LIMIT);
    other.lease().close();
    RoutingDecision back = router.select(session("s", context), limited);
    assertThat(back.replica().id()).isEqualTo(bound.id());
    assertThat(back.repinCause()).isEmpty();
    back.lease().close();
  }

  private static Replica limitedOf(List<Replica> list, String id) {
    return list.stream().filter(r -> r.id().equals(id)).findFirst().orElseThrow();
  }

  @Test
  void overloadedBoundReplicaIsRepinned() {
    Router router = router();
    List<Replica> fleet = replicas(2);
    int[] context = tokens(5, 1024);
    RoutingDecision first = router.select(session("s", context), fleet);
    first.lease().close();
    List<Replica> loaded = new ArrayList<>();
    for (Replica r : fleet) {
      loaded.add(r.equals(first.replica())
          ? r.withLoad(ReplicaLoad.builder().waitingRequests(200).runningRequests(256).build())
          : r);
    }
    RoutingDecision d = router.select(session("s", context), loaded);
    assertThat(d.repinCause()).contains(RepinCause.REPLICA_OVERLOADED);
  }

  @Test
  void drainingReplicaKeepsItsSessionsButGetsNoNewOnes() {
    Router router = router();
    List<Replica> fleet = replicas(2);
    RoutingDecision first = router.select(session("s", tokens(1, 256)), fleet);
    first.lease().close();
    List<Replica> draining = new ArrayList<>();
    for (Replica r : fleet) {
      draining.add(r.equals(first.replica()) ? r.withHealth(ReplicaHealth.DRAINING) : r);
    }
    assertThat(router.select(session("s", tokens(1, 256)), draining).replica().id())
        .isEqualTo(first.replica().id());
    for (int i = 0; i < 20; i++) {
      RoutingDecision d = router.select(session("new-" + i, tokens(100 + i, 256)), draining);
      assertThat(d.replica().id()).isNotEqualTo(first.replica().id());
      d.lease().close();
    }
  }

  @Test
  void sleepingModelIsAvoidedWhileAnAwakeReplicaExists() {
    Router router = router();
    List<Replica> fleet = List.of(
        Replica.builder("asleep").model("m", ModelState.SLEEPING).build(),
        Replica.builder("awake").model("m", ModelState.ACTIVE)
            .load(ReplicaLoad.builder().waitingRequests(50).build()).build());
    for (int i = 0; i < 10; i++) {
      RoutingDecision d = router.select(RoutingRequest.builder().model("m")
          .promptTokens(tokens(i, 64)).build(), fleet);
      assertThat(d.replica().id()).isEqualTo("awake");
      d.lease().close();
    }
  }

  /** A router whose listener records each wake request as {@code replica/model}. */
  private Router routerRecordingWakes(List<String> wakes) {
    return AffinityRouter.builder().clock(clock).addListener(new RoutingListener() {
      @Override
      public void onWakeRequested(Replica replica, String model) {
        wakes.add(replica.id() + "/" + model);
      }
    }).build();
  }

  @Test
  void modelAsleepEverywhereRequestsOneWakeAndRoutesNothing() {
    List<String> wakes = new ArrayList<>();
    Router router = routerRecordingWakes(wakes);
    List<Replica> fleet = List.of(
        Replica.builder("a").model("m", ModelState.SLEEPING).model("n", ModelState.ACTIVE).build(),
        Replica.builder("b").model("m", ModelState.SLEEPING).build());
    RoutingRequest req = RoutingRequest.builder().model("m").promptTokens(tokens(1, 64)).build();
    RoutingDecision d = router.select(req, fleet);
    assertThat(d.isRouted()).isFalse();
    assertThat(d.reason()).isEqualTo(RoutingReason.MODEL_WAKING);
    assertThat(d.retryAfter()).isEqualTo(AffinityRouter.Builder.DEFAULT_UNAVAILABLE_RETRY_AFTER);
    assertThat(d.wokenReplicaId()).isPresent();
    assertThat(router.select(req, fleet).wokenReplicaId()).isEqualTo(d.wokenReplicaId());
    assertThat(wakes).containsExactly(d.wokenReplicaId().get() + "/m"); // asked once, not per request
    clock.advance(AffinityRouter.Builder.DEFAULT_UNAVAILABLE_RETRY_AFTER.plusSeconds(1));
    router.select(req, fleet);
    assertThat(wakes).hasSize(2);
  }

  @Test
  void busyAwakeReplicasAskToWakeASleepingOneAndStillRoute() {
    List<String> wakes = new ArrayList<>();
    Router router = routerRecordingWakes(wakes);
    Replica asleep = Replica.builder("asleep").model("m", ModelState.SLEEPING).build();
    Replica idle = Replica.builder("awake").model("m", ModelState.ACTIVE).build();
    RoutingRequest req = RoutingRequest.builder().model("m").promptTokens(tokens(1, 64)).build();
    RoutingDecision calm = router.select(req, List.of(asleep, idle));
    calm.lease().close();
    assertThat(wakes).isEmpty(); // an idle awake replica needs no help
    // 50 waiting requests of ~1k tokens: about 1 s of queue, above the 100 ms threshold.
    Replica busy = idle.withLoad(ReplicaLoad.builder().waitingRequests(50).build());
    for (int i = 0; i < 3; i++) {
      RoutingDecision d = router.select(req, List.of(asleep, busy));
      assertThat(d.isRouted()).isTrue();
      assertThat(d.replica().id()).isEqualTo("awake"); // never held for the wake
      d.lease().close();
    }
    assertThat(wakes).containsExactly("asleep/m"); // asked once per retry-after window
  }

  @Test
  void aLongCachedSessionWaitsOutAQueueThatMovesAShortOne() {
    // The same queue on the bound replica: worth waiting for a 32k-token cached context (about
    // 1.2 s of prefill saved, times 8), not for a 512-token one (11 ms saved).
    for (int contextTokens : new int[] {32_768, 512}) {
      Router router = router();
      List<Replica> fleet = replicas(2);
      int[] context = tokens(contextTokens, contextTokens);
      RoutingDecision first = router.select(session("s", context), fleet);
      first.lease().markFirstToken();
      first.lease().complete(100);
      List<Replica> loaded = new ArrayList<>();
      for (Replica r : fleet) {
        loaded.add(r.equals(first.replica())
            ? r.withLoad(ReplicaLoad.builder().waitingRequests(100).build()) : r);
      }
      RoutingDecision next = router.select(session("s", concat(context, tokens(9, 64))), loaded);
      if (contextTokens == 512) {
        assertThat(next.reason()).isEqualTo(RoutingReason.SESSION_REPINNED);
        assertThat(next.repinCause()).contains(RepinCause.REPLICA_OVERLOADED);
        assertThat(next.replica().id()).isNotEqualTo(first.replica().id());
      } else {
        assertThat(next.reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
        assertThat(next.scores().queueSeconds()).isGreaterThan(1.0); // it waits that long
        assertThat(next.replica().id()).isEqualTo(first.replica().id());
      }
      next.lease().close();
    }
  }

  @Test
  void theContextAnotherGatewayLeftIsCreditedWhenThePromptExtendsIt() {
    InMemoryBindingStore store = InMemoryBindingStore.builder().clock(clock).build();
    Router g1 = AffinityRouter.builder().clock(clock).bindingStore(store).build();
    Router g2 = AffinityRouter.builder().clock(clock).bindingStore(store).build();
    List<Replica> fleet = replicas(4);
    int[] context = tokens(4, 1024);
    g1.select(withOutput(session("s", context), 128), fleet).lease().close();
    // g2 never saw the session: the binding says g1 sent 1,024 prompt + 128 output tokens there.
    context = concat(concat(context, tokens(8, 128)), tokens(5, 9088));
    RoutingDecision viaOther = g2.select(withOutput(session("s", context), 128), fleet);
    viaOther.lease().close();
    assertThat(viaOther.reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
    assertThat(viaOther.scores().cachedFraction()).isEqualTo(1152 / 10_240.0);
    // g2 routed that turn itself: its own index knows the 10k tokens, the binding adds nothing.
    context = concat(context, tokens(6, 10_240));
    RoutingDecision known = g2.select(session("s", context), fleet);
    known.lease().close();
    assertThat(known.replica()).isEqualTo(viaOther.replica());
    assertThat(known.scores().cachedFraction()).isEqualTo(0.5);
    // A prompt that does not extend the last one (the same session id, another conversation)
    // gets no credit from g2's context on g1, whose index has never seen it.
    RoutingDecision unrelated = g1.select(session("s", tokens(9, 4096)), fleet);
    unrelated.lease().close();
    assertThat(unrelated.replica()).isEqualTo(viaOther.replica());
    assertThat(unrelated.scores().cachedFraction()).isZero();
  }

  private static RoutingRequest withOutput(RoutingRequest r, int output) {
    return RoutingRequest.builder().sessionId(r.sessionId().orElseThrow())
        .promptTokens(r.promptTokens()).expectedOutputTokens(output).build();
  }

  @Test
  void notRoutedReasonsAreValues() {
    Router router = router();
    RoutingRequest m = RoutingRequest.builder().model("m").promptTokens(tokens(1, 64)).build();
    assertThat(router.select(m, List.of()).reason()).isEqualTo(RoutingReason.NO_REPLICA);
    assertThat(router.select(m, List.of(Replica.builder("x").model("other", ModelState.ACTIVE)
        .build())).reason()).isEqualTo(RoutingReason.NO_REPLICA);
    assertThat(router.select(m, List.of(Replica.builder("x").model("m", ModelState.LOADING)
        .build())).reason()).isEqualTo(RoutingReason.MODEL_LOADING);
    assertThat(router.select(m, List.of(Replica.builder("x").model("m", ModelState.ACTIVE)
        .health(ReplicaHealth.UNHEALTHY).build())).reason()).isEqualTo(RoutingReason.NO_REPLICA);
    Replica one = Replica.builder("x").maxInFlightRequests(1).build();
    RoutingDecision held = router.select(m, List.of(Replica.of("y").toBuilder().model("m",
        ModelState.ACTIVE).maxInFlightRequests(1).build()));
    RoutingDecision full = router.select(m, List.of(Replica.of("y").toBuilder().model("m",
        ModelState.ACTIVE).maxInFlightRequests(1).build()));
    assertThat(held.isRouted()).isTrue();
    assertThat(full.reason()).isEqualTo(RoutingReason.ALL_AT_LIMIT);
    assertThat(full.retryAfter()).isEqualTo(AffinityRouter.Builder.DEFAULT_AT_LIMIT_RETRY_AFTER);
    held.lease().close();
    assertThat(router.select(m, List.of(one.toBuilder().model("m", ModelState.ACTIVE).build()))
        .isRouted()).isTrue();
  }

  @Test
  void filtersRuleReplicasOutAndAThrowingFilterCountsAsRejection() {
    List<String> failures = new ArrayList<>();
    Router router = AffinityRouter.builder().clock(clock)
        .addFilter(new ReplicaFilter() {
          @Override
          public String name() {
            return "zone";
          }

          @Override
          public boolean accepts(RoutingRequest request, Replica replica) {
            if (replica.id().equals("boom")) {
              throw new IllegalStateException("broken plugin");
            }
            return !replica.id().equals("far");
          }
        })
        .addListener(new RoutingListener() {
          @Override
          public void onPluginFailure(String pluginName, Throwable cause) {
            failures.add(pluginName);
          }
        }).build();
    List<Replica> fleet = List.of(Replica.of("far"), Replica.of("boom"), Replica.of("near"));
    for (int i = 0; i < 10; i++) {
      RoutingDecision d = router.select(anonymous(tokens(i, 64)), fleet);
      assertThat(d.replica().id()).isEqualTo("near");
      d.lease().close();
    }
    assertThat(failures).isNotEmpty().containsOnly("zone");
  }

  @Test
  void tenantsNeverShareLocality() {
    Router router = router();
    List<Replica> fleet = replicas(16);
    int[] prompt = tokens(11, 4096);
    RoutingDecision a = router.select(RoutingRequest.builder().tenant("a").promptTokens(prompt)
        .build(), fleet);
    a.lease().close();
    RoutingDecision b = router.select(RoutingRequest.builder().tenant("b").promptTokens(prompt)
        .build(), fleet);
    b.lease().close();
    RoutingDecision a2 = router.select(RoutingRequest.builder().tenant("a").promptTokens(prompt)
        .build(), fleet);
    assertThat(a.matchedBlocks()).isZero();
    assertThat(b.matchedBlocks()).isZero();
    assertThat(a2.matchedBlocks()).isEqualTo(256);
  }

  @Test
  void prehashedRequestsRouteLikeTheOriginal() {
    Router router = router();
    List<Replica> fleet = replicas(4);
    int[] prompt = tokens(12, 1000);
    RoutingRequest original = anonymous(prompt);
    RoutingRequest hashed = router.prehash(original);
    assertThat(hashed.toString()).doesNotContain(String.valueOf(prompt[0]));
    RoutingDecision a = router.select(original, fleet);
    a.lease().close();
    RoutingDecision b = router.select(hashed, fleet);
    assertThat(b.replica()).isEqualTo(a.replica());
    assertThat(b.matchedBlocks()).isEqualTo(1000 / 16);
    assertThat(hashed.promptTokenCount()).isEqualTo(1000);
  }

  @Test
  void textPromptsAreHashedInCharacterBlocks() {
    Router router = router();
    List<Replica> fleet = replicas(4);
    String system = "You are a careful assistant. ".repeat(40);
    RoutingDecision a = router.select(RoutingRequest.builder().promptText(system + "first?")
        .build(), fleet);
    a.lease().close();
    RoutingDecision b = router.select(RoutingRequest.builder().promptText(system + "second?")
        .build(), fleet);
    assertThat(b.replica()).isEqualTo(a.replica());
    assertThat(b.matchedBlocks()).isEqualTo(system.length() / 64);
  }

  @Test
  void separateRoutersShareBindingsThroughTheStore() {
    InMemoryBindingStore store = InMemoryBindingStore.builder().clock(clock).build();
    Router g1 = AffinityRouter.builder().clock(clock).bindingStore(store).build();
    Router g2 = AffinityRouter.builder().clock(clock).bindingStore(store).build();
    List<Replica> fleet = replicas(8);
    int[] context = tokens(4, 800);
    RoutingDecision first = g1.select(session("s", context), fleet);
    for (int turn = 0; turn < 6; turn++) {
      context = concat(context, tokens(40 + turn, 100));
      Router g = turn % 2 == 0 ? g2 : g1;
      RoutingDecision d = g.select(session("s", context), fleet);
      assertThat(d.replica()).isEqualTo(first.replica());
      d.lease().close();
    }
  }

  @Test
  void explanationShowsReasonReplicaAndTermsButNoPrompt() {
    Router router = router();
    RoutingDecision d = router.select(RoutingRequest.builder().sessionId("s")
        .promptText("secret prompt text ".repeat(10)).build(), replicas(2));
    assertThat(d.explain()).contains("SESSION_CLAIMED", d.replica().id(), "est. TTFT")
        .doesNotContain("secret");
  }
}
