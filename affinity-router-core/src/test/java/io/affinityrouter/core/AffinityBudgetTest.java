package io.affinityrouter.core;

import static io.affinityrouter.core.Prompts.anonymous;
import static io.affinityrouter.core.Prompts.concat;
import static io.affinityrouter.core.Prompts.session;
import static io.affinityrouter.core.Prompts.tokens;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The affinity budget, and prefix matches aged out by the replica's cache turnover. */
class AffinityBudgetTest {
  private final TestClock clock = new TestClock();

  private Router router(double quantile) {
    return AffinityRouter.builder().clock(clock).random(new SplittableRandom(1))
        .affinityBudget(quantile, Pick.HOLDER_SAVINGS_MULTIPLE).build();
  }

  /**
   * 300 cold 32k-token prompts: each one's best prefill is about 1.2 s, so the budget becomes about
   * 1.2 s; the engine-queue estimate learns 32k uncached tokens per request (0.68 s per waiting one).
   */
  private static void warmUp(Router router, List<Replica> fleet) {
    for (int i = 0; i < 300; i++) {
      router.select(anonymous(tokens(10_000 + i, 32_768)), fleet).lease().close();
    }
  }

  private static List<Replica> withWaiting(List<Replica> fleet, Replica busy, int waiting) {
    List<Replica> out = new ArrayList<>();
    for (Replica r : fleet) {
      out.add(r.id().equals(busy.id())
          ? r.withLoad(ReplicaLoad.builder().waitingRequests(waiting).build()) : r);
    }
    return out;
  }

  @Test
  void aSessionStaysWithinTheBudgetWhereTheRepinThresholdAloneWouldMoveIt() {
    for (double quantile : new double[] {0, AffinityBudget.QUANTILE}) {
      Router router = router(quantile);
      List<Replica> fleet = Prompts.replicas(2);
      warmUp(router, fleet);
      int[] context = tokens(1, 512);
      RoutingDecision first = router.select(session("s", context), fleet);
      first.lease().complete(100);
      // One waiting request ahead (about 0.68 s): more than 350 ms + 8 × the 11 ms a 512-token
      // context saves, less than the 1.2 s budget.
      RoutingDecision next = router.select(session("s", concat(context, tokens(2, 64))),
          withWaiting(fleet, first.replica(), 1));
      if (quantile == 0) {
        assertThat(next.reason()).isEqualTo(RoutingReason.SESSION_REPINNED);
      } else {
        assertThat(next.reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
        assertThat(next.scores().queueSeconds()).isBetween(0.4, 1.0);
      }
      next.lease().complete(100);
      // Beyond the budget (about 2 s ahead) the threshold decides again.
      if (quantile > 0) {
        RoutingDecision far = router.select(session("s", concat(context, tokens(3, 64))),
            withWaiting(fleet, first.replica(), 3));
        assertThat(far.reason()).isEqualTo(RoutingReason.SESSION_REPINNED);
      }
    }
  }

  @Test
  void aSharedPrefixGoesToItsHolderWithinTheBudgetWhenItsCacheSavesEnough() {
    for (double quantile : new double[] {0, AffinityBudget.QUANTILE}) {
      Router router = router(quantile);
      List<Replica> fleet = Prompts.replicas(4);
      warmUp(router, fleet);
      int[] system = tokens(7, 16_384); // about 0.46 s of prefill
      RoutingDecision a = router.select(anonymous(concat(system, tokens(8, 64))), fleet);
      a.lease().complete(100);
      // The holder has 0.68 s queued: more than recomputing 16k tokens elsewhere, within 4 × its
      // savings and within the budget.
      RoutingDecision b = router.select(anonymous(concat(system, tokens(9, 64))),
          withWaiting(fleet, a.replica(), 1));
      if (quantile == 0) {
        assertThat(b.replica().id()).isNotEqualTo(a.replica().id());
      } else {
        assertThat(b.replica().id()).isEqualTo(a.replica().id());
        assertThat(b.scores().cachedFraction()).isGreaterThan(0.9);
      }
      b.lease().close();
      // A short shared prefix (2k tokens, 45 ms saved) is not worth 0.68 s: 4 × 45 ms < 0.68 s.
      int[] shortSystem = tokens(17, 2048);
      RoutingDecision c = router.select(anonymous(concat(shortSystem, tokens(18, 64))), fleet);
      c.lease().complete(100);
      RoutingDecision d = router.select(anonymous(concat(shortSystem, tokens(19, 64))),
          withWaiting(fleet, c.replica(), 1));
      assertThat(d.replica().id()).isNotEqualTo(c.replica().id());
    }
  }

  @Test
  void blocksOlderThanTheReplicasCacheTurnoverCountAsEvicted() {
    Router router = router(0);
    Replica x = Replica.of("x").withLoad(ReplicaLoad.builder().kvCapacityTokens(100_000).build());
    List<Replica> only = List.of(x);
    int[] prompt = tokens(1, 8192);
    router.select(anonymous(prompt), only).lease().complete(100);
    for (int i = 0; i < 100; i++) {
      router.select(anonymous(tokens(100 + i, 8192)), only).lease().complete(100);
    }
    // About 830k tokens written at once: the 100k-token cache turns over in about 7 s.
    RoutingDecision fresh = router.select(anonymous(prompt), only);
    assertThat(fresh.matchedBlocks()).isEqualTo(8192 / 16);
    fresh.lease().complete(100);
    clock.advance(Duration.ofSeconds(10));
    RoutingDecision aged = router.select(anonymous(prompt), only);
    assertThat(aged.matchedBlocks()).isZero();
    assertThat(aged.scores().cachedFraction()).isZero();
    aged.lease().complete(100);

    // Blocks the engine's KV events report are exact: held until removed, never aged; a prompt
    // only the router recorded there still ages.
    int[] routedOnly = tokens(300, 8192);
    router.select(anonymous(routedOnly), only).lease().complete(100);
    router.cacheEvents().blocksStored("x", null, null, null,
        java.util.stream.LongStream.rangeClosed(1, 8192 / 16).toArray(), prompt, 16);
    clock.advance(Duration.ofSeconds(60));
    assertThat(router.select(anonymous(routedOnly), only).matchedBlocks()).isZero();
    assertThat(router.select(anonymous(prompt), only).matchedBlocks()).isEqualTo(8192 / 16);
    clock.advance(Duration.ofMinutes(10));
    assertThat(router.select(anonymous(prompt), only).matchedBlocks()).isEqualTo(8192 / 16);
  }

  @Test
  void theEnginesWriteCounterSetsTheTurnoverCountingOtherGatewaysTraffic() {
    Router router = router(0);
    ReplicaLoad.Builder load = ReplicaLoad.builder().kvCapacityTokens(1_000_000);
    int[] prompt = tokens(1, 8192);
    // This router alone wrote 8k tokens: by its own count the 1M-token cache would last for ever.
    router.select(anonymous(prompt), List.of(Replica.of("x").withLoad(load.kvWrittenTokens(5_000_000)
        .build()))).lease().complete(100);
    // The engine's counter says 2M tokens were written in the next 20 s (other gateways): the cache
    // turns over in about 10 s, so the prompt this router sent 20 s ago is gone.
    for (int s = 1; s <= 20; s++) {
      clock.advance(Duration.ofSeconds(1));
      Replica x = Replica.of("x").withLoad(load.kvWrittenTokens(5_000_000 + s * 100_000L).build());
      router.select(anonymous(tokens(1000 + s, 16)), List.of(x)).lease().complete(1);
    }
    Replica x = Replica.of("x").withLoad(load.kvWrittenTokens(7_000_000).build());
    assertThat(router.select(anonymous(prompt), List.of(x)).matchedBlocks()).isZero();

    // A quiet engine (the counter barely moves) keeps what it was sent.
    Router quiet = router(0);
    quiet.select(anonymous(prompt), List.of(Replica.of("x").withLoad(load.kvWrittenTokens(100)
        .build()))).lease().complete(100);
    for (int s = 1; s <= 20; s++) {
      clock.advance(Duration.ofSeconds(1));
      Replica y = Replica.of("x").withLoad(load.kvWrittenTokens(8_400 + s * 100L).build());
      quiet.select(anonymous(tokens(1000 + s, 16)), List.of(y)).lease().complete(1);
    }
    Replica y = Replica.of("x").withLoad(load.kvWrittenTokens(10_400).build());
    assertThat(quiet.select(anonymous(prompt), List.of(y)).matchedBlocks()).isEqualTo(8192 / 16);
  }

  /** Three idle 1M-token replicas whose engines write 100k, 20k and 50k tokens per second. */
  private List<Replica> writingFleet(int second, int waitingOnB) {
    long[] rates = {100_000, 20_000, 50_000};
    List<Replica> fleet = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      fleet.add(Replica.of(String.valueOf((char) ('a' + i))).withLoad(ReplicaLoad.builder()
          .kvCapacityTokens(1_000_000).kvWrittenTokens(1_000_000 + rates[i] * second)
          .waitingRequests(i == 1 ? waitingOnB : 0).build()));
    }
    return fleet;
  }

  @Test
  void coldPromptsGoToTheNearEqualReplicaWhoseCacheLivesLongest() {
    Router router = router(0);
    for (int s = 0; s <= 10; s++) { // the engines' write rates become known
      clock.advance(Duration.ofSeconds(1));
      router.select(anonymous(tokens(100 + s, 16)), writingFleet(s, 0)).lease().complete(1);
    }
    // Cold prompts of different families would be spread by their placement keys; each write
    // evicts the oldest blocks where the cache lives longest: b's (1M / 20k = 50 s, a's lasts 10 s).
    for (int i = 0; i < 20; i++) {
      clock.advance(Duration.ofSeconds(1));
      RoutingDecision d = router.select(anonymous(tokens(1_000 + i, 1024)), writingFleet(11 + i, 0));
      assertThat(d.replica().id()).isEqualTo("b");
      d.lease().complete(1);
    }
    // Load still comes first: with requests waiting on b, the next longest-lived replica takes them.
    clock.advance(Duration.ofSeconds(1));
    RoutingDecision d = router.select(anonymous(tokens(2_000, 1024)), writingFleet(31, 4));
    assertThat(d.replica().id()).isEqualTo("c");
  }

  @Test
  void withoutAKnownCapacityNothingIsAged() {
    Router router = router(0);
    List<Replica> only = List.of(Replica.of("x"));
    int[] prompt = tokens(1, 8192);
    router.select(anonymous(prompt), only).lease().complete(100);
    for (int i = 0; i < 100; i++) {
      router.select(anonymous(tokens(100 + i, 8192)), only).lease().complete(100);
    }
    clock.advance(Duration.ofMinutes(10));
    assertThat(router.select(anonymous(prompt), only).matchedBlocks()).isEqualTo(8192 / 16);
  }

  @Test
  void badBudgetsAreRefused() {
    AffinityRouter.Builder b = AffinityRouter.builder();
    assertThatThrownBy(() -> b.affinityBudget(1.0, 4))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("affinityBudgetQuantile: 1.0 (expected: >= 0 and < 1)");
    assertThatThrownBy(() -> b.affinityBudget(-0.1, 4))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.affinityBudget(Double.NaN, 4))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.affinityBudget(0.98, -1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("holderSavingsMultiple: -1.0 (expected: >= 0 and finite)");
    assertThatThrownBy(() -> b.affinityBudget(0.98, Double.POSITIVE_INFINITY))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
