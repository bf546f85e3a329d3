package io.affinityrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.redis.testing.CommandStats;
import io.affinityrouter.redis.testing.RedisProcess;
import io.affinityrouter.redis.testing.RedisServerExtension;
import io.affinityrouter.redis.testing.Windowed;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The local cache against a real server: invalidation, TTL refresh, commands per call. */
class LocalBindingCacheTest {

  private static final Duration TTL = Duration.ofMinutes(5);
  @RegisterExtension
  static final RedisServerExtension redis = new RedisServerExtension();

  @BeforeEach
  void flush() {
    redis.server().cli("flushall");
  }

  private static RedisBindingStore store(long cacheSize, Duration refresh) {
    return RedisBindingStore.builder().uri(redis.uri())
        .commandTimeout(Duration.ofSeconds(1)).localCacheSize(cacheSize).localCacheRefresh(refresh)
        .build();
  }

  private static <T> T await(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(5, TimeUnit.SECONDS);
  }

  @Test
  void aRepinReachesTheOtherGatewaysCacheByPubSub() throws Exception {
    BindingKey key = new BindingKey("m", "t", "hot");
    try (RedisBindingStore a = store(1_000, Duration.ofMinutes(1));
        RedisBindingStore b = store(1_000, Duration.ofMinutes(1))) {
      Binding claimed = await(a.getOrClaim(key, "r1", TTL));
      await(b.getOrClaim(key, "r2", TTL));
      assertThat(await(b.getOrClaim(key, "r2", TTL)).replicaId()).isEqualTo("r1");
      assertThat(b.stats().cacheHits()).isEqualTo(1);

      Binding moved = await(a.repin(key, claimed.generation(), "r3", TTL));
      long start = System.nanoTime();
      Binding seen = await(b.getOrClaim(key, "r2", TTL));
      while (!seen.replicaId().equals("r3") && System.nanoTime() - start < TimeUnit.SECONDS.toNanos(2)) {
        RedisProcess.sleep(1);
        seen = await(b.getOrClaim(key, "r2", TTL));
      }
      long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      System.out.printf("invalidation: other gateway saw the repin after %d ms%n", millis);
      assertThat(seen).isEqualTo(new Binding("r3", moved.generation(), false));
      assertThat(millis).isLessThan(500);
      assertThat(b.stats().invalidationsReceived()).isPositive();
    }
  }

  @Test
  void aLostPubSubConnectionEmptiesTheCache() throws Exception {
    BindingKey key = new BindingKey("m", "t", "lost");
    try (RedisBindingStore a = store(0, Duration.ofMinutes(1));
        RedisBindingStore b = store(1_000, Duration.ofMinutes(1))) {
      Binding claimed = await(b.getOrClaim(key, "r1", TTL));
      assertThat(await(b.getOrClaim(key, "r9", TTL)).replicaId()).isEqualTo("r1");
      redis.server().cli("client", "kill", "type", "pubsub");
      // The invalidation of this repin is published while b is not subscribed.
      await(a.repin(key, claimed.generation(), "r2", TTL));
      RedisProcess.sleep(300);
      assertThat(await(b.getOrClaim(key, "r9", TTL)).replicaId()).isEqualTo("r2");
    }
  }

  @Test
  void cachedBindingsStillSlideTheTtlAtMostOncePerInterval() throws Exception {
    BindingKey key = new BindingKey("m", "t", "sliding");
    try (RedisBindingStore s = store(1_000, Duration.ofMillis(200))) {
      await(s.getOrClaim(key, "r1", Duration.ofMillis(1_500)));
      CommandStats.reset(redis.server());
      int calls = 0;
      long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(3_000);
      while (System.nanoTime() < end) {
        assertThat(await(s.getOrClaim(key, "r2", Duration.ofMillis(1_500))).replicaId())
            .isEqualTo("r1");
        calls++;
        RedisProcess.sleep(10);
      }
      long commands = CommandStats.clientCommands(CommandStats.read(redis.server()));
      System.out.printf("sliding TTL with cache: %d calls over 3 s, %d Redis commands%n", calls, commands);
      // The key outlived twice its TTL because the cache refreshed it (about every 200 ms).
      assertThat(Long.parseLong(redis.server().cli("pttl", redis.server().cli("--scan", "--pattern", "ar:b:*"))))
          .isPositive();
      assertThat(commands).isBetween(5L, 25L);
      assertThat(calls).isGreaterThan(100);
    }
  }

  @Test
  void commandsPerCallInASteadyRunWithAndWithoutCache() throws Exception {
    int sessions = 2_000;
    int turns = 20;
    double[] perCall = new double[2];
    long[] cacheSizes = {0, 10_000};
    for (int c = 0; c < 2; c++) {
      redis.server().cli("flushall");
      try (RedisBindingStore s = store(cacheSizes[c], Duration.ofSeconds(2))) {
        Windowed.run(sessions, 128, i -> s.getOrClaim(new BindingKey("m", "t", "s" + i), "r" + i % 8, TTL));
        CommandStats.reset(redis.server());
        Windowed.run(sessions * turns, 128,
            i -> s.getOrClaim(new BindingKey("m", "t", "s" + i % sessions), "r0", TTL));
        long commands = CommandStats.clientCommands(CommandStats.read(redis.server()));
        perCall[c] = commands / (double) (sessions * turns);
        System.out.printf("store steady run, local cache %d: %d calls, %d client commands, %.3f per"
            + " call%n", cacheSizes[c], sessions * turns, commands, perCall[c]);
      }
    }
    assertThat(perCall[0]).isLessThanOrEqualTo(1.0).isGreaterThan(0.99);
    assertThat(perCall[1]).isLessThanOrEqualTo(0.2);
  }
}
