package io.affinityrouter.redis.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.redis.RedisBindingStore;
import io.affinityrouter.redis.testing.Fleet;
import io.affinityrouter.redis.testing.RedisServerExtension;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletionStage;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Four routers on one real Redis take turns routing a long session, each turn through the router
 * after the last one's, so each router sees the session for the first time (and then only every
 * fourth turn). The bound replica has a queue: credited with the context the binding carries, it
 * keeps the session; without the context, the same routers move it.
 */
class ContextAcrossGatewaysTest {
  private static final int ROUTERS = 4;
  private static final int TURNS = 12;
  private static final Duration TIMEOUT = Duration.ofSeconds(5);
  @RegisterExtension
  static final RedisServerExtension redis = new RedisServerExtension();

  @Test
  void eachRouterKeepsTheSessionWhereTheBindingSaysItsContextIs() {
    List<RoutingDecision> turns = route("with-context", UnaryOperator.identity());
    RoutingDecision first = turns.get(0);
    for (int t = 1; t < turns.size(); t++) {
      RoutingDecision d = turns.get(t);
      assertThat(d.reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
      assertThat(d.replica().id()).isEqualTo(first.replica().id());
      // The last turn's prompt and its reply, exactly: what the binding says the replica holds.
      int previous = 8_000 + 2_200 * (t - 1);
      assertThat(d.scores().cachedFraction()).isEqualTo((previous + 200.0) / (previous + 2_200));
    }
  }

  @Test
  void withoutTheContextTheSameRoutersMoveTheSession() {
    List<RoutingDecision> turns = route("without-context", ContextAcrossGatewaysTest::forgetful);
    assertThat(turns.stream().filter(d -> d.reason() == RoutingReason.SESSION_REPINNED))
        .isNotEmpty();
  }

  private static List<RoutingDecision> route(String session, UnaryOperator<BindingStore> wrap) {
    List<Router> routers = new ArrayList<>();
    List<RedisBindingStore> stores = new ArrayList<>();
    try {
      for (int g = 0; g < ROUTERS; g++) {
        RedisBindingStore store = RedisBindingStore.builder().uri(redis.uri())
            .commandTimeout(TIMEOUT).build();
        stores.add(store);
        routers.add(AffinityRouter.builder().bindingStore(wrap.apply(store)).storeTimeout(TIMEOUT)
            .random(new SplittableRandom(g)).build());
      }
      List<Replica> idle = Fleet.replicas(8);
      List<RoutingDecision> decisions = new ArrayList<>();
      int[] prompt = tokens(1, 8_000);
      String bound = null;
      for (int t = 0; t < TURNS; t++) {
        List<Replica> fleet = bound == null ? idle : busy(idle, bound);
        RoutingDecision d = routers.get(t % ROUTERS).select(RoutingRequest.builder()
            .sessionId(session).promptTokens(prompt).expectedOutputTokens(200).build(), fleet);
        assertThat(d.isRouted()).isTrue();
        decisions.add(d);
        d.lease().markFirstToken();
        d.lease().complete(200);
        bound = d.replica().id();
        // The next turn: this prompt, the reply, and the user's next message.
        prompt = concat(concat(prompt, tokens(100 + t, 200)), tokens(200 + t, 2_000));
      }
      return decisions;
    } finally {
      routers.forEach(Router::close);
      stores.forEach(RedisBindingStore::close);
    }
  }

  /** The bound replica queues 10 requests; the others are idle. */
  private static List<Replica> busy(List<Replica> idle, String bound) {
    List<Replica> out = new ArrayList<>();
    for (Replica r : idle) {
      out.add(r.id().equals(bound)
          ? r.withLoad(ReplicaLoad.builder().waitingRequests(10).runningRequests(8).build()) : r);
    }
    return out;
  }

  /** The store as a third-party implementation without session contexts sees it. */
  private static BindingStore forgetful(BindingStore store) {
    return new BindingStore() {
      @Override
      public CompletionStage<Binding> getOrClaim(BindingKey key, String candidate,
          Duration ttl) {
        return store.getOrClaim(key, candidate, ttl);
      }

      @Override
      public CompletionStage<Binding> repin(BindingKey key, long generation, String replica,
          Duration ttl) {
        return store.repin(key, generation, replica, ttl);
      }

      @Override
      public CompletionStage<Optional<Binding>> get(BindingKey key) {
        return store.get(key);
      }

      @Override
      public void close() {}
    };
  }

  private static int[] tokens(int seed, int n) {
    int[] t = new int[n];
    SplittableRandom r = new SplittableRandom(seed);
    for (int i = 0; i < n; i++) {
      t[i] = r.nextInt(32_000);
    }
    return t;
  }

  private static int[] concat(int[] a, int[] b) {
    int[] c = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }
}
