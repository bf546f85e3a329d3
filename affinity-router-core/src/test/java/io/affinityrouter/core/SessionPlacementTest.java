package io.affinityrouter.core;

import static io.affinityrouter.core.Prompts.anonymous;
import static io.affinityrouter.core.Prompts.concat;
import static io.affinityrouter.core.Prompts.session;
import static io.affinityrouter.core.Prompts.tokens;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.spi.LoadExchange;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * New sessions are placed by the sessions each replica already holds: between two turns a session
 * runs nowhere, so no queue shows the work it will bring back.
 */
class SessionPlacementTest {
  private static final int SESSIONS = 130; // 3 returns each: past the return estimate's warm-up
  private static final Duration THINK = Duration.ofSeconds(5);
  // Every session's prompt starts with it: a new session finds it cached where others run.
  private static final int[] SYSTEM = tokens(424_242, 128);

  private final TestClock clock = new TestClock();
  private final InMemoryBindingStore store = InMemoryBindingStore.builder().clock(clock).build();
  private final Replica idle = Replica.of("r0");
  // r1 runs a few sequences: on queues alone r0 is the cheaper replica
  private final Replica running = Replica.builder("r1")
      .load(ReplicaLoad.builder().runningRequests(10).build()).build();
  private final List<Replica> fleet = List.of(idle, running);

  private Router router(LoadExchange exchange, String id) {
    return AffinityRouter.builder().clock(clock).bindingStore(store)
        .loadExchange(exchange, id, Duration.ofMillis(100))
        .random(new SplittableRandom(7)).topK(1).build();
  }

  /**
   * {@link #SESSIONS} sessions named {@code prefix}N bound to {@code on} (offered alone), 4 turns
   * each {@link #THINK} apart, each turn closed before the next.
   */
  private void bindSessions(Router router, String prefix, Replica on) {
    int[][] prompts = new int[SESSIONS][];
    for (int turn = 0; turn < 4; turn++) {
      for (int s = 0; s < SESSIONS; s++) {
        prompts[s] = turn == 0 ? withSystem(s)
            : concat(prompts[s], tokens(1000L * turn + s, 64));
        RoutingDecision d = router.select(session(prefix + s, prompts[s]), List.of(on));
        assertThat(d.replica()).isEqualTo(on);
        d.lease().close();
      }
      clock.advance(THINK);
    }
  }

  /** The system prompt and a task of its own. */
  private static int[] withSystem(long task) {
    return concat(SYSTEM, tokens(task, 128));
  }

  @Test
  void aNewSessionAvoidsTheReplicaWhoseSessionsAreBetweenTurns() {
    Router router = router(new InMemoryLoadExchange(), "a");
    bindSessions(router, "s", idle);
    RoutingDecision oneShot = router.select(anonymous(withSystem(99_998)), fleet);
    assertThat(oneShot.replica()).as("a request without a session goes by queues and cache")
        .isEqualTo(idle);
    oneShot.lease().close();
    RoutingDecision fresh = router.select(session("new", withSystem(99_999)), fleet);
    assertThat(fresh.replica()).as("a new session goes where fewer sessions come back")
        .isEqualTo(running);
    fresh.lease().close();
  }

  /**
   * Gateway b learns how long sessions take to come back on sessions of its own long ago; gateway
   * a binds sessions to r0; then b places a new session.
   */
  private Replica placedByTheOtherGateway(LoadExchange forA, LoadExchange forB) {
    Router a = router(forA, "a");
    Router b = router(forB, "b");
    bindSessions(b, "b", running);
    clock.advance(Duration.ofMinutes(2)); // b's own sessions there have all gone
    bindSessions(a, "a", idle);
    a.select(anonymous(tokens(1, 16)), fleet).lease().close(); // a publishes
    clock.advance(Duration.ofMillis(100));
    RoutingDecision fresh = b.select(session("new", withSystem(99_999)), fleet);
    fresh.lease().close();
    return fresh.replica();
  }

  @Test
  void anotherGatewaySeesThoseSessionsThroughTheExchange() {
    InMemoryLoadExchange shared = new InMemoryLoadExchange();
    assertThat(placedByTheOtherGateway(shared, shared)).isEqualTo(running);
  }

  @Test
  void withoutTheExchangeTheOtherGatewayPlacesByQueues() {
    assertThat(placedByTheOtherGateway(new InMemoryLoadExchange(), new InMemoryLoadExchange()))
        .isEqualTo(idle);
  }

  @Test
  void newSessionsDoNotHerdOntoAFreshReplicaThatHoldsNone() {
    Router router = AffinityRouter.builder().clock(clock).bindingStore(store)
        .random(new SplittableRandom(7)).build();
    List<Replica> elders = Prompts.replicas(3);
    for (Replica elder : elders) {
      bindSessions(router, elder.id() + "-", elder);
    }
    Replica fresh = Replica.builder("fresh").readySince(clock.instant()).build();
    List<Replica> all = List.of(elders.get(0), elders.get(1), elders.get(2), fresh);
    int onFresh = 0;
    for (int s = 0; s < 200; s++) {
      RoutingDecision d = router.select(session("new" + s, withSystem(50_000 + s)), all);
      onFresh += d.replica().equals(fresh) ? 1 : 0;
      d.lease().close();
    }
    // the fresh replica is charged for no session and is the cheapest, but its ramp caps its share
    assertThat(onFresh).isBetween(1, 40); // 10 here; 67 with no ramp
  }

  @Test
  void gatewaysThatNeverTalkStillAgreeWhereAColdPromptFamilyStarts() {
    List<Replica> twins = Prompts.replicas(2);
    Replica[] chosen = new Replica[2];
    for (int g = 0; g < 2; g++) { // own stores, no exchange; each holds sessions on another twin
      Router router = AffinityRouter.builder().clock(clock).noLoadExchange()
          .bindingStore(InMemoryBindingStore.builder().clock(clock).build())
          .random(new SplittableRandom(g)).build();
      bindSessions(router, "g" + g + "-", twins.get(g));
      RoutingDecision d = router.select(session("cold", tokens(77_777, 256)), twins);
      chosen[g] = d.replica();
      d.lease().close();
      RoutingDecision warm = router.select(session("warm", withSystem(50_000)), twins);
      assertThat(warm.replica()).as("a prompt with a holder is placed by the sessions")
          .isNotEqualTo(twins.get(g));
      warm.lease().close();
    }
    assertThat(chosen[0]).isEqualTo(chosen[1]);
  }

  @Test
  void aThirdPartyExchangeWithoutTurnsStillSharesQueues() {
    AtomicReference<Map<String, Double>> published = new AtomicReference<>();
    LoadExchange queuesOnly = new LoadExchange() {
      @Override
      public Map<String, Double> exchange(String routerId, Map<String, Double> queued, long now) {
        published.set(queued);
        return Map.of("r0", 2.5);
      }

      @Override
      public void close() {}
    };
    Router r = router(queuesOnly, "a");
    RoutingDecision d = r.select(anonymous(tokens(5, 64)), fleet);
    assertThat(d.replica()).as("r0's peer queue is seen").isEqualTo(running);
    assertThat(published.get()).isEmpty();
  }
}
