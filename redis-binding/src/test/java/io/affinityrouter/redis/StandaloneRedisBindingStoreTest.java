package io.affinityrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.redis.testing.CommandStats;
import io.affinityrouter.redis.testing.RedisProcess;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.BindingStoreProvider;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The protocol against one real standalone redis-server. */
class StandaloneRedisBindingStoreTest {

  private static final Duration HOUR = Duration.ofHours(1);
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

  static <T> T await(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(5, TimeUnit.SECONDS);
  }

  private static BindingKey key(String session) {
    return new BindingKey("llama", "acme", session);
  }

  @Test
  void firstCallClaimsAndLaterCallsAdoptWithTheSameGeneration() throws Exception {
    Binding first = await(store.getOrClaim(key("s1"), "r1", HOUR));
    Binding second = await(store.getOrClaim(key("s1"), "r2", HOUR));
    assertThat(first.written()).isTrue();
    assertThat(first.replicaId()).isEqualTo("r1");
    assertThat(second).isEqualTo(new Binding("r1", first.generation(), false));
    assertThat(await(store.get(key("s1")))).contains(new Binding("r1", first.generation(), false));
  }

  @Test
  void getOrClaimSlidesTheTtl() throws Exception {
    // Windows of a minute and more: a busy machine may take seconds between the calls.
    await(store.getOrClaim(key("ttl"), "r1", Duration.ofSeconds(100)));
    String redisKey = server.cli("--scan", "--pattern", "ar:b:*");
    assertThat(Long.parseLong(server.cli("pttl", redisKey))).isBetween(40_000L, 100_000L);
    await(store.getOrClaim(key("ttl"), "r1", Duration.ofSeconds(1_000)));
    // Above the first TTL only if the second call slid it.
    assertThat(Long.parseLong(server.cli("pttl", redisKey))).isBetween(940_000L, 1_000_000L);
  }

  @Test
  void repinIsACompareAndSetOnTheGeneration() throws Exception {
    Binding claimed = await(store.getOrClaim(key("s2"), "r1", HOUR));
    Binding moved = await(store.repin(key("s2"), claimed.generation(), "r2", HOUR));
    assertThat(moved.written()).isTrue();
    assertThat(moved.replicaId()).isEqualTo("r2");
    assertThat(moved.generation()).isGreaterThan(claimed.generation());

    Binding stale = await(store.repin(key("s2"), claimed.generation(), "r3", HOUR));
    assertThat(stale).isEqualTo(new Binding("r2", moved.generation(), false));
    assertThat(await(store.get(key("s2")))).contains(new Binding("r2", moved.generation(), false));
  }

  @Test
  void repinOfAnExpiredBindingClaimsIt() throws Exception {
    Binding repinned = await(store.repin(key("gone"), 12345, "r9", HOUR));
    assertThat(repinned.written()).isTrue();
    assertThat(repinned.replicaId()).isEqualTo("r9");
  }

  @Test
  void generationsKeepIncreasingAcrossExpiry() throws Exception {
    long previous = 0;
    for (int i = 0; i < 5; i++) {
      Binding b = await(store.getOrClaim(key("expiring"), "r" + i, Duration.ofMillis(30)));
      assertThat(b.written()).isTrue();
      assertThat(b.generation()).isGreaterThan(previous);
      previous = b.generation();
      Binding repinned = await(store.repin(key("expiring"), b.generation(), "x", Duration.ofMillis(30)));
      assertThat(repinned.generation()).isGreaterThan(b.generation());
      previous = repinned.generation();
      RedisProcess.sleep(60);
      assertThat(await(store.get(key("expiring")))).isEmpty();
    }
  }

  @Test
  void foreignAndCorruptValuesAreTreatedAsAbsentOverwrittenAndCounted() throws Exception {
    long before = store.stats().corruptValues();
    await(store.getOrClaim(key("c1"), "r1", HOUR));
    await(store.getOrClaim(key("c2"), "r1", HOUR));
    await(store.getOrClaim(key("c3"), "r1", HOUR));
    String[] keys = server.cli("--scan", "--pattern", "ar:b:*").split("\\R");
    assertThat(keys).hasSize(3);
    server.cli("set", keys[0], "not-a-binding");
    server.cli("set", keys[1], "ar1|0|r1");
    server.cli("del", keys[2]);
    server.cli("lpush", keys[2], "a-list");

    for (String s : new String[] {"c1", "c2", "c3"}) {
      assertThat(await(store.get(key(s)))).isEmpty();
    }
    assertThat(store.stats().corruptValues() - before).isEqualTo(3);
    for (String s : new String[] {"c1", "c2", "c3"}) {
      Binding b = await(store.getOrClaim(key(s), "r7", HOUR));
      assertThat(b.written()).isTrue();
      assertThat(b.replicaId()).isEqualTo("r7");
    }
    assertThat(store.stats().corruptValues() - before).isEqualTo(6);
    assertThat(await(store.get(key("c3")))).map(Binding::replicaId).contains("r7");
  }

  @Test
  void scriptsAreReloadedAfterNoscript() throws Exception {
    await(store.getOrClaim(key("n1"), "r1", HOUR));
    server.cli("script", "flush");
    long reloads = store.stats().scriptReloads();
    Binding b = await(store.getOrClaim(key("n1"), "r2", HOUR));
    assertThat(b.replicaId()).isEqualTo("r1");
    assertThat(store.stats().scriptReloads()).isEqualTo(reloads + 1);
    CommandStats.reset(server);
    await(store.getOrClaim(key("n1"), "r2", HOUR));
    assertThat(CommandStats.read(server)).containsEntry("evalsha", 1L).doesNotContainKey("eval");
  }

  @Test
  void eachCallIsOneCommand() throws Exception {
    CommandStats.reset(server);
    Binding b = await(store.getOrClaim(key("one"), "r1", HOUR));
    await(store.getOrClaim(key("one"), "r1", HOUR));
    await(store.repin(key("one"), b.generation(), "r2", HOUR));
    Map<String, Long> calls = CommandStats.read(server);
    assertThat(CommandStats.clientCommands(calls)).isEqualTo(3);
    assertThat(calls).containsEntry("evalsha", 3L);
  }

  @Test
  void keysAreNamespacedAndHashSessionIdsByDefault() throws Exception {
    await(store.getOrClaim(new BindingKey("m1", "t1", "secret-session"), "r1", HOUR));
    await(store.getOrClaim(new BindingKey("m1", "t2", "secret-session"), "r2", HOUR));
    await(store.getOrClaim(new BindingKey("m2", "t1", "secret-session"), "r3", HOUR));
    String keys = server.cli("--scan", "--pattern", "*");
    assertThat(keys.split("\\R")).hasSize(3);
    assertThat(keys).doesNotContain("secret-session")
        .contains("ar:b:2:m1/2:t1/" + BindingKeyFormat.sha256Hex("secret-session"));
    assertThat(await(store.get(new BindingKey("m1", "t2", "secret-session"))))
        .map(Binding::replicaId).contains("r2");
  }

  @Test
  void rawSessionIdsAndPrefixWhenConfigured() throws Exception {
    try (RedisBindingStore raw = RedisBindingStore.builder()
        .uri("redis://127.0.0.1:" + server.port()).keyPrefix("gw:").hashSessionIds(false).build()) {
      await(raw.getOrClaim(new BindingKey("", "", "visible"), "r1", HOUR));
    }
    assertThat(server.cli("--scan", "--pattern", "*")).isEqualTo("gw:0:/0:/visible");
  }

  @Test
  void aClientOwnedByTheGatewayIsUsedAndLeftOpen() throws Exception {
    io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create();
    try {
      io.lettuce.core.RedisURI uri = io.lettuce.core.RedisURI.create("redis://127.0.0.1:" + server.port());
      try (RedisBindingStore shared = RedisBindingStore.builder().client(client, uri)
          .localCacheSize(10).build()) {
        assertThat(await(shared.getOrClaim(key("shared"), "r1", HOUR)).written()).isTrue();
      }
      // Closing the store closed its connections only: the gateway's client still connects.
      try (io.lettuce.core.api.StatefulRedisConnection<String, String> c = client.connect(uri)) {
        assertThat(c.sync().ping()).isEqualTo("PONG");
      }
    } finally {
      client.shutdown();
    }
  }

  @Test
  void badArgumentsAreRejectedAtTheBoundary() {
    assertThatThrownBy(() -> store.getOrClaim(key("a"), "", HOUR))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("candidateReplicaId: empty (expected: a replica id)");
    assertThatThrownBy(() -> store.getOrClaim(key("a"), "r1", Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("ttl: PT0S (expected: >= 1ms)");
    assertThatThrownBy(() -> store.repin(key("a"), 0, "r1", HOUR))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("expectedGeneration: 0 (expected: > 0)");
    assertThatThrownBy(() -> RedisBindingStore.builder().build())
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> RedisBindingStore.builder().commandTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("commandTimeout: PT0S (expected: > 0)");
  }

  @Test
  void aClosedStoreFailsItsStagesInsteadOfThrowing() {
    RedisBindingStore closed = RedisBindingStore.builder()
        .uri("redis://127.0.0.1:" + server.port()).build();
    closed.close();
    closed.close();
    assertThatThrownBy(() -> await(closed.getOrClaim(key("x"), "r1", HOUR)))
        .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(IllegalStateException.class);
  }

  @Test
  void theProviderIsFoundByServiceLoaderAndReadsItsProperties() throws Exception {
    BindingStoreProvider provider = ServiceLoader.load(BindingStoreProvider.class).stream()
        .map(ServiceLoader.Provider::get).filter(p -> p.name().equals("redis")).findFirst()
        .orElseThrow();
    assertThat(provider.isAvailable()).isTrue();
    assertThat(provider.priority()).isEqualTo(5);
    try (BindingStore s = provider.create(Map.of("uri", "redis://127.0.0.1:" + server.port(),
        "key-prefix", "prov:", "timeout-ms", "200", "hash-session-ids", "false",
        "local-cache-size", "100"))) {
      Binding b = await(s.getOrClaim(key("p"), "r1", HOUR));
      assertThat(await(s.get(key("p")))).isEqualTo(Optional.of(new Binding("r1", b.generation(), false)));
    }
    assertThat(server.cli("--scan", "--pattern", "prov:*")).isEqualTo("prov:5:llama/4:acme/p");
    assertThatThrownBy(() -> provider.create(Map.of("uri", "redis://x", "colour", "red")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("property: colour");
    assertThatThrownBy(() -> provider.create(Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("uri/cluster-uris: neither (expected: exactly one)");
    assertThatThrownBy(() -> provider.create(Map.of("uri", "redis://x", "timeout-ms", "soon")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("timeout-ms: soon (expected: an integer)");
  }
}
