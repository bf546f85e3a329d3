package io.affinityrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.redis.testing.RedisProcess;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.SessionContext;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The session context a binding carries, through one real redis-server. */
class SessionContextRedisTest {
  private static final Duration HOUR = Duration.ofHours(1);
  private static final SessionContext A = new SessionContext(11, 1000, 100, 62, -5L);
  private static final SessionContext B = new SessionContext(-22, 1200, 80, 75, Long.MIN_VALUE);
  private static RedisProcess server;
  private static RedisBindingStore store;

  @BeforeAll
  static void start() {
    server = RedisProcess.start();
    store = RedisBindingStore.builder().uri("redis://127.0.0.1:" + server.port()).build();
  }

  @AfterAll
  static void stop() {
    if (store != null) {
      store.close();
    }
    server.close();
  }

  @BeforeEach
  void flush() {
    server.cli("flushall");
  }

  private static <T> T await(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(5, TimeUnit.SECONDS);
  }

  private static BindingKey key(String session) {
    return new BindingKey("m", "t", session);
  }

  private static SessionContext withoutAge(SessionContext c) {
    return c == null ? null : c.aged(0);
  }

  @Test
  void eachCallReturnsTheContextAnotherWriterLeftAndStoresItsOwn() throws Exception {
    Binding claimed = await(store.getOrClaim(key("s"), "r1", HOUR, A));
    assertThat(claimed.written()).isTrue();
    assertThat(claimed.context()).isNull();

    Binding byB = await(store.getOrClaim(key("s"), "r2", HOUR, B));
    assertThat(byB.replicaId()).isEqualTo("r1");
    assertThat(byB.generation()).isEqualTo(claimed.generation());
    assertThat(withoutAge(byB.context())).isEqualTo(A);
    assertThat(byB.context().ageMillis()).isBetween(0L, 5_000L);
    // B wrote the last turn: B knows it, so its next read carries none; A's read carries B's.
    assertThat(await(store.getOrClaim(key("s"), "r2", HOUR, B)).context()).isNull();
    assertThat(withoutAge(await(store.getOrClaim(key("s"), "r2", HOUR, A)).context()))
        .isEqualTo(B);
    assertThat(withoutAge(await(store.get(key("s"))).orElseThrow().context())).isEqualTo(A);
  }

  @Test
  void aRepinStoresItsTurnAndAStaleRepinReturnsTheWinnersContext() throws Exception {
    Binding claimed = await(store.getOrClaim(key("r"), "r1", HOUR, A));
    Binding moved = await(store.repin(key("r"), claimed.generation(), "r2", HOUR, B));
    assertThat(moved.written()).isTrue();
    assertThat(moved.context()).isNull();
    Binding stale = await(store.repin(key("r"), claimed.generation(), "r3", HOUR, A));
    assertThat(stale.written()).isFalse();
    assertThat(stale.replicaId()).isEqualTo("r2");
    assertThat(withoutAge(stale.context())).isEqualTo(B);
  }

  @Test
  void theAgeIsTheServersTimeSinceTheWrite() throws Exception {
    await(store.getOrClaim(key("age"), "r1", HOUR, A));
    RedisProcess.sleep(300);
    SessionContext read = await(store.getOrClaim(key("age"), "r1", HOUR, B)).context();
    assertThat(read.ageMillis()).isBetween(250L, 60_000L);
  }

  @Test
  void bindingsWrittenWithoutAContextStillReadAndGainOne() throws Exception {
    await(store.getOrClaim(key("old"), "r1", HOUR));
    String redisKey = server.cli("--scan", "--pattern", "ar:b:*");
    server.cli("set", redisKey, "ar1|123|r5");
    Binding read = await(store.getOrClaim(key("old"), "r9", HOUR, A));
    assertThat(read).isEqualTo(new Binding("r5", 123, false));
    assertThat(server.cli("get", redisKey)).startsWith("ar2|123|11|1000|100|62|-5|").endsWith("|r5");
    assertThat(withoutAge(await(store.getOrClaim(key("old"), "r9", HOUR, B)).context()))
        .isEqualTo(A);
    // A call without a context slides the TTL and leaves the stored context as it is.
    assertThat(await(store.getOrClaim(key("old"), "r9", HOUR)).replicaId()).isEqualTo("r5");
    assertThat(withoutAge(await(store.getOrClaim(key("old"), "r9", HOUR, A)).context()))
        .isEqualTo(B);
  }

  @Test
  void aValueWithAMalformedContextIsCorruptAndOverwritten() throws Exception {
    await(store.getOrClaim(key("bad"), "r1", HOUR, A));
    String redisKey = server.cli("--scan", "--pattern", "ar:b:*");
    long before = store.stats().corruptValues();
    server.cli("set", redisKey, "ar2|7|11|1000|x|62|-5|1|r1");
    Binding b = await(store.getOrClaim(key("bad"), "r4", HOUR, B));
    assertThat(b.written()).isTrue();
    assertThat(b.replicaId()).isEqualTo("r4");
    assertThat(store.stats().corruptValues() - before).isEqualTo(1);
  }

  @Test
  void aReplicaIdWithTheSeparatorSurvivesTheContext() throws Exception {
    await(store.getOrClaim(key("sep"), "pod|a|b", HOUR, A));
    Binding read = await(store.getOrClaim(key("sep"), "x", HOUR, B));
    assertThat(read.replicaId()).isEqualTo("pod|a|b");
    assertThat(withoutAge(read.context())).isEqualTo(A);
    assertThat(await(store.get(key("sep"))).orElseThrow().replicaId()).isEqualTo("pod|a|b");
  }
}
