package io.affinityrouter.core;

import static io.affinityrouter.core.Prompts.replicas;
import static io.affinityrouter.core.Prompts.session;
import static io.affinityrouter.core.Prompts.tokens;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/** A gateway with a stale view never overwrites a newer repin; it adopts it. */
class FencingTest {
  private final TestClock clock = new TestClock();
  private final InMemoryBindingStore memory = InMemoryBindingStore.builder().clock(clock).build();

  @Test
  void staleRepinAdoptsTheNewerBinding() {
    List<Replica> fleet = replicas(4);
    Router first = AffinityRouter.builder().clock(clock).bindingStore(memory).build();
    RoutingDecision claim = first.select(session("s", tokens(1, 256)), fleet);
    claim.lease().close();
    String original = claim.replica().id();
    BindingKey key = new BindingKey("", "", "s");
    // Between gateway B's read and its repin, gateway A repins the session to another replica.
    String[] newer = new String[1];
    BindingStore interleaving = new BindingStore() {
      @Override
      public CompletionStage<Binding> getOrClaim(BindingKey k, String c, Duration ttl) {
        return memory.getOrClaim(k, c, ttl);
      }

      @Override
      public CompletionStage<Binding> repin(BindingKey k, long expected, String r, Duration ttl) {
        if (newer[0] == null) {
          String other = fleet.stream().map(Replica::id)
              .filter(id -> !id.equals(original) && !id.equals(r)).findFirst().orElseThrow();
          Binding b = memory.repin(k, expected, other, ttl).toCompletableFuture().join();
          assertThat(b.written()).isTrue();
          newer[0] = other;
        }
        return memory.repin(k, expected, r, ttl);
      }

      @Override
      public CompletionStage<Optional<Binding>> get(BindingKey k) {
        return memory.get(k);
      }

      @Override
      public void close() {}
    };
    Router stale = AffinityRouter.builder().clock(clock).bindingStore(interleaving).build();
    List<Replica> withoutOriginal = new ArrayList<>();
    for (Replica r : fleet) {
      withoutOriginal.add(r.id().equals(original) ? r.withHealth(ReplicaHealth.UNHEALTHY) : r);
    }
    RoutingDecision d = stale.select(session("s", tokens(1, 256)), withoutOriginal);
    assertThat(d.reason()).isEqualTo(RoutingReason.SESSION_ADOPTED);
    assertThat(d.replica().id()).isEqualTo(newer[0]);
    Binding stored = memory.get(key).toCompletableFuture().join().orElseThrow();
    assertThat(stored.replicaId()).isEqualTo(newer[0]);
    assertThat(d.bindingGeneration()).isEqualTo(stored.generation());
  }

  @Test
  void interleavedRepinsFromManyRoutersNeverLoseTheNewestBinding() {
    List<Replica> fleet = replicas(6);
    BindingKey key = new BindingKey("", "", "s");
    Binding current = memory.getOrClaim(key, "r0", Duration.ofHours(1)).toCompletableFuture()
        .join();
    java.util.SplittableRandom rnd = new java.util.SplittableRandom(7);
    long newest = current.generation();
    String newestReplica = current.replicaId();
    List<Long> views = new ArrayList<>(List.of(current.generation()));
    for (int i = 0; i < 2000; i++) {
      long view = views.get(rnd.nextInt(views.size())); // a gateway's possibly stale view
      String target = fleet.get(rnd.nextInt(fleet.size())).id();
      Binding b = memory.repin(key, view, target, Duration.ofHours(1)).toCompletableFuture().join();
      if (view == newest) {
        assertThat(b.written()).isTrue();
        assertThat(b.generation()).isGreaterThan(newest);
        newest = b.generation();
        newestReplica = target;
        views.add(newest);
      } else {
        assertThat(b.written()).isFalse();
        assertThat(b.generation()).isEqualTo(newest);
        assertThat(b.replicaId()).isEqualTo(newestReplica);
      }
    }
  }
}
