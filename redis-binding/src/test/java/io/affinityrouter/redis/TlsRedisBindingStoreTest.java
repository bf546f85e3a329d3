package io.affinityrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.redis.testing.RedisProcess;
import io.affinityrouter.redis.testing.TlsFiles;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.SslOptions;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The store over TLS ({@code rediss://}) to a TLS-only server with a CA made for this run. */
class TlsRedisBindingStoreTest {

  private static TlsFiles tls;
  private static RedisProcess server;

  @BeforeAll
  static void start() throws Exception {
    tls = TlsFiles.generate();
    server = tls.startServer();
  }

  @AfterAll
  static void stop() {
    if (server != null) {
      server.close();
    }
    if (tls != null) {
      tls.delete();
    }
  }

  @Test
  void claimsAndRepinsOverVerifiedTls() throws Exception {
    SslOptions ssl = SslOptions.builder().jdkSslProvider().trustManager(tls.caCert().toFile()).build();
    try (RedisBindingStore store = RedisBindingStore.builder()
        .uri("rediss://127.0.0.1:" + server.port()).sslOptions(ssl).localCacheSize(100).build()) {
      BindingKey key = new BindingKey("m", "t", "tls");
      Binding claimed = store.getOrClaim(key, "r1", Duration.ofMinutes(1)).toCompletableFuture()
          .get(5, TimeUnit.SECONDS);
      Binding moved = store.repin(key, claimed.generation(), "r2", Duration.ofMinutes(1))
          .toCompletableFuture().get(5, TimeUnit.SECONDS);
      assertThat(moved.written()).isTrue();
      assertThat(store.get(key).toCompletableFuture().get(5, TimeUnit.SECONDS))
          .map(Binding::replicaId).contains("r2");
      assertThat(Long.parseLong(server.cli("dbsize"))).isPositive();
    }
  }

  @Test
  void theProviderTakesATrustedCaFile() throws Exception {
    try (io.affinityrouter.spi.BindingStore store = new RedisBindingStoreProvider().create(
        java.util.Map.of("uri", "rediss://127.0.0.1:" + server.port(),
            "tls-ca-file", tls.caCert().toString()))) {
      Binding b = store.getOrClaim(new BindingKey("m", "t", "provider-tls"), "r1",
          Duration.ofMinutes(1)).toCompletableFuture().get(5, TimeUnit.SECONDS);
      assertThat(b.written()).isTrue();
    }
    assertThatThrownBy(() -> new RedisBindingStoreProvider().create(java.util.Map.of(
        "uri", "rediss://127.0.0.1:" + server.port(), "tls-ca-file", "/nonexistent.pem")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("tls-ca-file: /nonexistent.pem (expected: a readable PEM file)");
  }

  @Test
  void anUntrustedServerIsRefused() {
    // Without the test CA, the JDK trust store does not trust the server: the handshake fails.
    assertThatThrownBy(() -> RedisBindingStore.builder()
        .uri("rediss://127.0.0.1:" + server.port()).build())
        .isInstanceOf(RedisConnectionException.class);
  }
}
