package io.affinityrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.redis.testing.RedisProcess;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The store as an ACL user that may run only what the store needs, on its own keys and channel:
 * this is also the documented minimal ACL for production.
 */
class AclRedisBindingStoreTest {

  /**
   * What the store's user needs (scripts run their commands with the caller's permissions). On
   * Redis 7.2+ also allow {@code +client|setinfo}, which Lettuce sends on connect (it tolerates a
   * refusal).
   */
  static final String STORE_ACL = "on >s3cret resetkeys ~ar:b:* resetchannels &ar:b:* -@all"
      + " +evalsha +eval +script|load +get +set +pexpire +time +publish +subscribe +ping +hello"
      + " +auth +client|setname";
  private static final Duration TTL = Duration.ofMinutes(5);
  private static RedisProcess server;

  @BeforeAll
  static void start() {
    server = RedisProcess.start();
    assertThat(server.cli(("acl setuser binder " + STORE_ACL).split(" "))).isEqualTo("OK");
    assertThat(server.cli("acl", "setuser", "reader", "on", ">r3ad", "~*", "-@all", "+get",
        "+hello", "+auth", "+ping")).isEqualTo("OK");
  }

  @AfterAll
  static void stop() {
    server.close();
  }

  private static <T> T await(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(5, TimeUnit.SECONDS);
  }

  @Test
  void theMinimalUserCanClaimRepinReadAndSubscribe() throws Exception {
    BindingKey key = new BindingKey("m", "t", "acl");
    try (RedisBindingStore store = RedisBindingStore.builder()
        .uri("redis://binder:s3cret@127.0.0.1:" + server.port()).localCacheSize(100).build()) {
      Binding claimed = await(store.getOrClaim(key, "r1", TTL));
      assertThat(claimed.written()).isTrue();
      Binding moved = await(store.repin(key, claimed.generation(), "r2", TTL));
      assertThat(moved.written()).isTrue();
      assertThat(await(store.get(key))).map(Binding::replicaId).contains("r2");
      assertThat(store.stats().failures()).isZero();
    }
  }

  @Test
  void aUserWithoutScriptRightsGetsFailedStagesNotExceptions() throws Exception {
    try (RedisBindingStore store = RedisBindingStore.builder()
        .uri("redis://reader:r3ad@127.0.0.1:" + server.port()).build()) {
      CompletionStage<Binding> stage = store.getOrClaim(new BindingKey("m", "t", "x"), "r1", TTL);
      assertThatThrownBy(() -> await(stage)).isInstanceOf(ExecutionException.class)
          .hasMessageContaining("NOPERM");
      assertThat(store.stats().failures()).isEqualTo(1);
    }
  }

  @Test
  void theLoadExchangeNeedsTheThreeHashCommandsTheReadmeAdds() {
    assertThat(server.cli(("acl setuser exchanger " + STORE_ACL.replace(">s3cret", ">x")
        + " +hset +hgetall +hdel").split(" "))).isEqualTo("OK");
    try (RedisBindingStore minimal = RedisBindingStore.builder()
            .uri("redis://binder:s3cret@127.0.0.1:" + server.port()).build();
        RedisBindingStore withHashes = RedisBindingStore.builder()
            .uri("redis://exchanger:x@127.0.0.1:" + server.port()).build()) {
      RedisLoadExchange denied = minimal.loadExchange();
      denied.exchange("a", java.util.Map.of("r1", 1.0), 1_000);
      RedisLoadExchange allowed = withHashes.loadExchange();
      java.util.Map<String, Double> view = java.util.Map.of();
      long deadline = System.nanoTime() + 5_000_000_000L;
      allowed.exchange("b", java.util.Map.of("r1", 2.0), 1_000);
      RedisLoadExchange other = withHashes.loadExchange();
      while (view.isEmpty() && System.nanoTime() < deadline) {
        view = other.exchange("c", java.util.Map.of(), 1_000);
        RedisProcess.sleep(10);
      }
      assertThat(view).containsEntry("r1", 2.0); // b's, not the denied a's
      while (denied.failures() == 0 && System.nanoTime() < deadline) {
        RedisProcess.sleep(10);
      }
      assertThat(denied.failures()).isEqualTo(1);
      assertThat(allowed.failures()).isZero();
    }
  }

  @Test
  void aWrongPasswordFailsTheBuild() {
    assertThatThrownBy(() -> RedisBindingStore.builder()
        .uri("redis://binder:wrong@127.0.0.1:" + server.port()).build())
        .isInstanceOf(io.lettuce.core.RedisConnectionException.class);
  }
}
