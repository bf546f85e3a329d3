package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.core.TestClock;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStoreProvider;
import io.affinityrouter.spi.SessionContext;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InMemoryBindingStoreTest {
  private final TestClock clock = new TestClock();
  private final InMemoryBindingStore store = InMemoryBindingStore.builder().clock(clock).build();
  private final BindingKey key = new BindingKey("m", "t", "s");
  private final Duration ttl = Duration.ofMinutes(10);

  private Binding claim(String candidate) {
    return store.getOrClaim(key, candidate, ttl).toCompletableFuture().join();
  }

  private Binding claim(String candidate, SessionContext turn) {
    return store.getOrClaim(key, candidate, ttl, turn).toCompletableFuture().join();
  }

  private static final SessionContext A = new SessionContext(1, 1000, 100, 62, 42);
  private static final SessionContext B = new SessionContext(2, 2000, 50, 125, -42);

  @Test
  void eachClaimReturnsTheContextAnotherWriterLeftAgedOnTheStoresClock() {
    assertThat(claim("r1", A).context()).isNull();
    clock.advance(Duration.ofSeconds(3));
    Binding byB = claim("r2", B);
    assertThat(byB.replicaId()).isEqualTo("r1");
    assertThat(byB.context()).isEqualTo(A.aged(3000));
    assertThat(claim("r2", B).context()).isNull(); // B's own turn: B knows it
    clock.advance(Duration.ofMillis(500));
    assertThat(claim("r2", A).context()).isEqualTo(B.aged(500));
    assertThat(store.get(key).toCompletableFuture().join().orElseThrow().context())
        .isEqualTo(A.aged(0));
    // A claim without a context leaves the stored one; a new TTL keeps it too.
    assertThat(claim("r2").context()).isEqualTo(A.aged(0));
    Binding longer = store.getOrClaim(key, "r2", ttl.multipliedBy(2), B)
        .toCompletableFuture().join();
    assertThat(longer.context()).isEqualTo(A.aged(0));
    assertThat(claim("r2", A).context()).isEqualTo(B.aged(0));
  }

  @Test
  void aRepinStoresItsTurnAndAStaleOneReturnsTheWinnersContext() {
    Binding b = claim("r1", A);
    Binding moved = store.repin(key, b.generation(), "r2", ttl, B).toCompletableFuture().join();
    assertThat(moved.written()).isTrue();
    assertThat(moved.context()).isNull();
    Binding stale = store.repin(key, b.generation(), "r3", ttl, A).toCompletableFuture().join();
    assertThat(stale.written()).isFalse();
    assertThat(stale.context()).isEqualTo(B.aged(0));
    assertThat(store.repin(key, b.generation(), "r3", ttl, B).toCompletableFuture().join()
        .context()).isNull();
  }

  @Test
  void aSameWriterReadAllocatesNoNewAnswer() {
    claim("r1", A);
    Binding first = claim("r1", A);
    assertThat(claim("r1", A)).isSameAs(first);
  }

  @Test
  void firstClaimWinsAndLaterClaimsReturnIt() {
    Binding first = claim("a");
    assertThat(first.written()).isTrue();
    Binding second = claim("b");
    assertThat(second.written()).isFalse();
    assertThat(second.replicaId()).isEqualTo("a");
    assertThat(second.generation()).isEqualTo(first.generation());
  }

  @Test
  void bindingsSlideTheirTtlOnEveryClaimAndExpireWhenIdle() {
    claim("a");
    for (int i = 0; i < 5; i++) {
      clock.advance(Duration.ofMinutes(9));
      assertThat(claim("b").replicaId()).isEqualTo("a");
    }
    clock.advance(Duration.ofMinutes(11));
    assertThat(store.get(key).toCompletableFuture().join()).isEmpty();
    assertThat(claim("b").replicaId()).isEqualTo("b");
  }

  @Test
  void generationsIncreaseAcrossExpiryAndReclaim() {
    long g1 = claim("a").generation();
    clock.advance(Duration.ofMinutes(11));
    long g2 = claim("b").generation();
    assertThat(g2).isGreaterThan(g1);
  }

  @Test
  void repinIsACompareAndSetOnTheGeneration() {
    Binding b = claim("a");
    Binding moved = store.repin(key, b.generation(), "b", ttl).toCompletableFuture().join();
    assertThat(moved.written()).isTrue();
    assertThat(moved.replicaId()).isEqualTo("b");
    Binding stale = store.repin(key, b.generation(), "c", ttl).toCompletableFuture().join();
    assertThat(stale.written()).isFalse();
    assertThat(stale).isEqualTo(new Binding("b", moved.generation(), false));
  }

  @Test
  void repinOfAnExpiredKeyClaimsIt() {
    Binding b = claim("a");
    clock.advance(Duration.ofMinutes(11));
    Binding after = store.repin(key, b.generation(), "c", ttl).toCompletableFuture().join();
    assertThat(after.written()).isTrue();
    assertThat(after.replicaId()).isEqualTo("c");
  }

  @Test
  void sizeIsBounded() {
    InMemoryBindingStore small = InMemoryBindingStore.builder().maximumSize(100).clock(clock)
        .build();
    for (int i = 0; i < 1000; i++) {
      small.getOrClaim(new BindingKey("", "", "s" + i), "a", ttl);
    }
    assertThat(small.estimatedSize()).isLessThanOrEqualTo(100);
  }

  @Test
  void badArgumentsAreRefused() {
    assertThatThrownBy(() -> store.getOrClaim(key, "a", Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("ttl: PT0S (expected: > 0)");
    assertThatThrownBy(() -> InMemoryBindingStore.builder().maximumSize(0))
        .hasMessage("maximumSize: 0 (expected: > 0)");
    assertThatThrownBy(() -> new BindingKey("", "", " "))
        .hasMessage("sessionId: blank (expected: a non-blank string)");
  }

  @Test
  void aProviderThatFailsToLoadIsSkippedAndNamedWhenItsNameIsAsked(@TempDir Path dir)
      throws Exception {
    Path services = dir.resolve("META-INF/services");
    Files.createDirectories(services);
    Files.writeString(services.resolve(BindingStoreProvider.class.getName()),
        "io.affinityrouter.redis.NotOnThisClassPath\n");
    try (URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()},
        BindingStores.class.getClassLoader())) {
      BindingStores.Scan scan = BindingStores.scan(loader);
      assertThat(scan.providers()).extracting(BindingStoreProvider::name).contains("memory");
      assertThat(scan.failures()).hasSize(1);
      assertThat(BindingStores.create("memory", Map.of(), loader))
          .isInstanceOf(InMemoryBindingStore.class);
      assertThatThrownBy(() -> BindingStores.create("redis", Map.of(), loader))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("bindingStore: redis (expected: one of the available providers [")
          .hasMessageContaining("1 provider(s) failed to load, first: ")
          .hasMessageContaining("NotOnThisClassPath")
          .satisfies(e -> assertThat(e.getSuppressed()).hasSize(1));
    }
  }

  @Test
  void providersAreFoundByName() {
    assertThat(BindingStores.create("memory", Map.of("maximum-size", "10")))
        .isInstanceOf(InMemoryBindingStore.class);
    assertThatThrownBy(() -> BindingStores.create("nope", Map.of()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("bindingStore: nope (expected: one of the available providers")
        .hasMessageContaining("memory");
    assertThatThrownBy(() -> BindingStores.create("memory", Map.of("maxsize", "1")))
        .hasMessage("property: maxsize (expected: one of [maximum-size])");
  }
}
