package io.affinityrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.ModelState;
import io.affinityrouter.Replica;
import io.affinityrouter.core.lifecycle.ModelActuator;
import io.affinityrouter.core.lifecycle.ModelClaim;
import io.affinityrouter.core.lifecycle.ModelLifecycle;
import io.affinityrouter.redis.testing.RedisProcess;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Two gateways' lifecycles sharing one lease on a real redis-server: only one acts, and the other
 * takes over when the first stops. The engine never takes the wake (it fails), so the leader
 * retries it every round: a steady stream of actions that says who acts.
 */
class RedisLifecycleLeadersTest {
  private static RedisProcess server;

  @BeforeAll
  static void start() {
    server = RedisProcess.start();
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static RedisBindingStore store() {
    return RedisBindingStore.builder().uri("redis://127.0.0.1:" + server.port())
        .commandTimeout(Duration.ofSeconds(30)).build();
  }

  private static ModelLifecycle lifecycle(RedisBindingStore store, String holder,
      List<String> acted) {
    List<Replica> fleet = List.of(Replica.builder("vllm-0").model("m", ModelState.SLEEPING)
        .build());
    ModelActuator failing = new ModelActuator() {
      @Override
      public CompletionStage<Outcome> sleep(String replicaId, String model, int level) {
        acted.add(holder);
        return CompletableFuture.completedFuture(Outcome.FAILED);
      }

      @Override
      public CompletionStage<Outcome> wake(String replicaId, String model) {
        acted.add(holder);
        return CompletableFuture.completedFuture(Outcome.FAILED);
      }
    };
    return ModelLifecycle.builder()
        .claim(ModelClaim.builder("m").gpuMemoryBytes(1).minAwake(1).build())
        .fleet(() -> fleet).actuator(failing).gpuMemoryBytes(1)
        .lease(store.lifecycleLease("models")).holder(holder).leaseTtl(Duration.ofMillis(500))
        .retryBackoff(Duration.ofMillis(1), Duration.ofMillis(1)).build();
  }

  private static Thread rounds(ModelLifecycle lifecycle, AtomicBoolean stop) {
    Thread t = new Thread(() -> {
      while (!stop.get()) {
        try {
          lifecycle.runOnce().toCompletableFuture().get(60, TimeUnit.SECONDS);
          Thread.sleep(5);
        } catch (InterruptedException e) {
          return;
        } catch (Exception e) {
          throw new AssertionError(e);
        }
      }
    });
    t.start();
    return t;
  }

  @Test
  void onlyOneGatewayActsAndTheOtherTakesOverWhenItStops() throws Exception {
    List<String> acted = new CopyOnWriteArrayList<>();
    try (RedisBindingStore storeA = store(); RedisBindingStore storeB = store()) {
      ModelLifecycle a = lifecycle(storeA, "gateway-a", acted);
      ModelLifecycle b = lifecycle(storeB, "gateway-b", acted);
      AtomicBoolean stopA = new AtomicBoolean();
      AtomicBoolean stopB = new AtomicBoolean();
      Thread ta = rounds(a, stopA);
      Thread tb = rounds(b, stopB);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (acted.size() < 50 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(acted).hasSizeGreaterThanOrEqualTo(50);
      String first = acted.get(0);
      assertThat(acted).as("one leader while both run").containsOnly(first);
      assertThat((first.equals("gateway-a") ? a : b).state().leader()).isTrue();
      assertThat((first.equals("gateway-a") ? b : a).state().leader()).isFalse();

      // The leader stops renewing (its gateway hangs); the follower takes over after the TTL.
      (first.equals("gateway-a") ? stopA : stopB).set(true);
      (first.equals("gateway-a") ? ta : tb).join(60_000);
      int before = acted.size();
      String second = first.equals("gateway-a") ? "gateway-b" : "gateway-a";
      while (!since(acted, before).contains(second) && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      List<String> after = since(acted, before);
      assertThat(after).contains(second);
      assertThat(after.subList(after.indexOf(second), after.size())).containsOnly(second);
      stopA.set(true);
      stopB.set(true);
      ta.join(60_000);
      tb.join(60_000);
      a.close();
      b.close();
    }
  }

  @Test
  void closingTheLeaderHandsTheLeaseOverAtOnce() throws Exception {
    List<String> acted = new CopyOnWriteArrayList<>();
    try (RedisBindingStore storeA = store(); RedisBindingStore storeB = store()) {
      ModelLifecycle a = ModelLifecycle.builder().claims(lifecycle(storeA, "a2", acted).claims())
          .fleet(List::of).actuator(noop()).gpuMemoryBytes(1)
          .lease(storeA.lifecycleLease("handover")).holder("a2")
          .leaseTtl(Duration.ofHours(1)).build();
      ModelLifecycle b = ModelLifecycle.builder().claims(a.claims()).fleet(List::of)
          .actuator(noop()).gpuMemoryBytes(1).lease(storeB.lifecycleLease("handover"))
          .holder("b2").leaseTtl(Duration.ofHours(1)).build();
      a.runOnce().toCompletableFuture().get(60, TimeUnit.SECONDS);
      b.runOnce().toCompletableFuture().get(60, TimeUnit.SECONDS);
      assertThat(a.state().leader()).isTrue();
      assertThat(b.state().leader()).isFalse();
      a.close(); // releases: no hour-long wait for the TTL
      b.runOnce().toCompletableFuture().get(60, TimeUnit.SECONDS);
      assertThat(b.state().leader()).isTrue();
      assertThat(b.state().token()).isGreaterThan(0);
      b.close();
    }
  }

  /** A snapshot: a live subList of a list other threads append to fails when they do. */
  private static List<String> since(List<String> acted, int from) {
    List<String> snapshot = List.copyOf(acted);
    return snapshot.subList(from, snapshot.size());
  }

  private static ModelActuator noop() {
    return new ModelActuator() {
      @Override
      public CompletionStage<Outcome> sleep(String replicaId, String model, int level) {
        return CompletableFuture.completedFuture(Outcome.DONE);
      }

      @Override
      public CompletionStage<Outcome> wake(String replicaId, String model) {
        return CompletableFuture.completedFuture(Outcome.DONE);
      }
    };
  }
}
