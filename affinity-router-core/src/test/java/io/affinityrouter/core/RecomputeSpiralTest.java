package io.affinityrouter.core;

import static io.affinityrouter.core.Prompts.anonymous;
import static io.affinityrouter.core.Prompts.concat;
import static io.affinityrouter.core.Prompts.replicas;
import static io.affinityrouter.core.Prompts.session;
import static io.affinityrouter.core.Prompts.tokens;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.RepinCause;
import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;

/**
 * A move recomputes a context on the fleet's time: under fleet-wide pressure the router stays (or
 * goes to the cache) and moves only off a hot spot onto a replica with room.
 */
class RecomputeSpiralTest {
  private final TestClock clock = new TestClock();

  private Router router() {
    return AffinityRouter.builder().clock(clock).random(new SplittableRandom(7)).build();
  }

  /** The fleet with each replica's waiting requests; {@code bound} gets {@code boundWaiting}. */
  private static List<Replica> loaded(List<Replica> fleet, String bound, int boundWaiting,
      int othersWaiting) {
    List<Replica> out = new ArrayList<>();
    for (Replica r : fleet) {
      int w = r.id().equals(bound) ? boundWaiting : othersWaiting;
      out.add(r.withLoad(ReplicaLoad.builder().waitingRequests(w).build()));
    }
    return out;
  }

  @Test
  void aSessionLeavesAHotSpotButNotAFleetThatIsBusyEverywhere() {
    int[] context = tokens(3, 512);
    IntFunction<RoutingDecision> nextTurnWithOthersWaiting = others -> {
      Router router = router();
      List<Replica> fleet = replicas(4);
      RoutingDecision first = router.select(session("s", context), fleet);
      first.lease().markFirstToken();
      first.lease().complete(100);
      clock.advance(Duration.ofSeconds(10));
      String bound = first.replica().id();
      return router.select(session("s", concat(context, tokens(9, 64))),
          loaded(fleet, bound, 200, others));
    };
    // The others idle: a hot spot; the short context is not worth the wait, the session moves.
    RoutingDecision hot = nextTurnWithOthersWaiting.apply(0);
    assertThat(hot.reason()).isEqualTo(RoutingReason.SESSION_REPINNED);
    assertThat(hot.repinCause()).contains(RepinCause.REPLICA_OVERLOADED);
    hot.lease().close();
    // Every replica queueing: a move would only recompute the context into another queue.
    RoutingDecision busy = nextTurnWithOthersWaiting.apply(150);
    assertThat(busy.reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
    assertThat(busy.scores().queueSeconds()).isGreaterThan(1.0);
    busy.lease().close();
  }

  @Test
  void aReturningSessionNeedsFreeKvOnlyForWhatItAdds() {
    Router router = router();
    List<Replica> fleet = replicas(2);
    int[] context = tokens(5, 32_768);
    RoutingDecision first = router.select(session("s", context), fleet);
    first.lease().markFirstToken();
    first.lease().complete(100);
    clock.advance(Duration.ofSeconds(5));
    // 40k tokens of KV, 30k in use: the whole 33k-token prompt would not fit, the 64 new ones do.
    List<Replica> kv = new ArrayList<>();
    for (Replica r : fleet) {
      kv.add(r.withLoad(ReplicaLoad.builder().kvUsage(0.75).kvCapacityTokens(40_000)
          .outputTokensPerSecond(500).build()));
    }
    RoutingDecision next = router.select(session("s", concat(context, tokens(9, 64))), kv);
    assertThat(next.reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
    assertThat(next.replica().id()).isEqualTo(first.replica().id());
    assertThat(next.scores().queueSeconds()).isLessThan(0.01); // no wait for free KV there
    next.lease().close();
  }

  @Test
  void underPressureAPromptGoesToItsCacheThroughALongerQueue() {
    int[] prompt = tokens(11, 8192);
    IntFunction<String> routedWithOthersWaiting = others -> {
      Router router = router();
      List<Replica> fleet = replicas(4);
      RoutingDecision first = router.select(anonymous(prompt), fleet);
      String holder = first.replica().id();
      first.lease().markFirstToken();
      first.lease().complete(100);
      clock.advance(Duration.ofSeconds(10));
      // The holder's queue is longer than the others' by about twice the prefill it saves.
      RoutingDecision d = router.select(anonymous(concat(prompt, tokens(12, 16))),
          loaded(fleet, holder, others + 15, others));
      d.lease().close();
      return d.replica().id().equals(holder) ? "holder" : "elsewhere";
    };
    // With idle replicas the prompt is recomputed where it starts at once.
    assertThat(routedWithOthersWaiting.apply(0)).isEqualTo("elsewhere");
    // When every replica queues, recomputing it would delay the requests behind it.
    assertThat(routedWithOthersWaiting.apply(120)).isEqualTo("holder");
  }
}
