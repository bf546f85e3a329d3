package io.affinityrouter.core;

import static io.affinityrouter.core.Prompts.anonymous;
import static io.affinityrouter.core.Prompts.replicas;
import static io.affinityrouter.core.Prompts.session;
import static io.affinityrouter.core.Prompts.tokens;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link ReplicaHealth#DRAINING}: a draining replica keeps the sessions already pinned to it and
 * gets no new sessions and no requests without a session, even when every replica is draining
 * (then those are not routed: {@code NO_REPLICA}, which a gateway answers with 503).
 */
class DrainingTest {
  private final TestClock clock = new TestClock();
  private final InMemoryBindingStore memory = InMemoryBindingStore.builder().clock(clock).build();
  private final ControllableStore store = new ControllableStore(memory);
  private final Router router = AffinityRouter.builder().clock(clock).bindingStore(store)
      .storeTimeout(Duration.ofSeconds(5)).build();

  private static List<Replica> drainAll(List<Replica> fleet) {
    List<Replica> out = new ArrayList<>();
    for (Replica r : fleet) {
      out.add(r.withHealth(ReplicaHealth.DRAINING));
    }
    return out;
  }

  @Test
  void withEveryReplicaDrainingBoundSessionsStayAndNothingNewIsRouted() {
    List<Replica> fleet = replicas(3);
    List<String> bound = new ArrayList<>();
    for (int s = 0; s < 12; s++) {
      RoutingDecision d = router.select(session("s" + s, tokens(s, 300)), fleet);
      d.lease().close();
      bound.add(d.replica().id());
    }
    List<Replica> draining = drainAll(fleet);
    for (int s = 0; s < 12; s++) {
      RoutingDecision d = router.select(session("s" + s, tokens(s, 300)), draining);
      assertThat(d.isRouted()).isTrue();
      assertThat(d.reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
      assertThat(d.replica().id()).isEqualTo(bound.get(s));
      d.lease().close();
    }
    RoutingDecision fresh = router.select(session("new", tokens(99, 300)), draining);
    assertThat(fresh.isRouted()).isFalse();
    assertThat(fresh.reason()).isEqualTo(RoutingReason.NO_REPLICA);
    assertThat(fresh.retryAfter()).isPositive();
    assertThat(memory.get(new io.affinityrouter.spi.BindingKey("", "", "new"))
        .toCompletableFuture().join()).as("no binding written for a new session").isEmpty();
    RoutingDecision sessionless = router.select(anonymous(tokens(98, 300)), draining);
    assertThat(sessionless.isRouted()).isFalse();
    assertThat(sessionless.reason()).isEqualTo(RoutingReason.NO_REPLICA);
  }

  @Test
  void withTheStoreDownABoundSessionStillReachesItsDrainingReplica() {
    List<Replica> fleet = replicas(3);
    RoutingDecision first = router.select(session("s", tokens(1, 300)), fleet);
    first.lease().close();
    store.mode = ControllableStore.Mode.FAIL;
    List<Replica> draining = drainAll(fleet);
    RoutingDecision d = router.select(session("s", tokens(1, 300)), draining);
    assertThat(d.isRouted()).isTrue();
    assertThat(d.isDegraded()).isTrue();
    assertThat(d.replica().id()).isEqualTo(first.replica().id());
    d.lease().close();
    RoutingDecision unknown = router.select(session("never-seen", tokens(2, 300)), draining);
    assertThat(unknown.reason()).isEqualTo(RoutingReason.NO_REPLICA);
  }
}
