package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.examples.cli.Flags;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/** Reads a {@link GatewayConfig} from the command line ({@link GatewayConfig#fromArgs}). */
final class GatewayFlags {
  private GatewayFlags() {}

  /**
   * Reads the command line.
   *
   * @throws IllegalArgumentException for an unknown flag or a bad value
   */
  static GatewayConfig parse(String[] args) {
    Flags f = Flags.parse(args, Set.of("listen", "backend", "redis", "session-header",
        "tenant-header", "scrape-interval-ms", "shutdown-grace-ms", "max-in-flight", "max-hold-ms", "max-held",
        "store-timeout-ms", "response-timeout-ms", "header-timeout-ms", "body-timeout-ms", "idle-timeout-ms",
        "max-header-bytes", "max-headers", "max-threads", "tokenizer", "tokenizer-model", "kv-events"));
    GatewayConfig.Builder b = GatewayConfig.builder();
    if (f.has("listen")) {
      b.listen(hostPort(f.string("listen", null)));
    }
    for (String backend : f.all("backend")) {
      int eq = backend.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("--backend: " + backend + " (expected: id=url)");
      }
      b.backend(backend.substring(0, eq), URI.create(backend.substring(eq + 1)));
    }
    if (f.has("redis")) {
      b.redisUri(f.string("redis", null));
    }
    b.sessionHeader(f.string("session-header", GatewayConfig.DEFAULT_SESSION_HEADER));
    b.tenantHeader(f.string("tenant-header", GatewayConfig.DEFAULT_TENANT_HEADER));
    b.scrapeInterval(Duration.ofMillis(f.integer("scrape-interval-ms",
        (int) GatewayConfig.DEFAULT_SCRAPE_INTERVAL.toMillis())));
    b.shutdownGrace(Duration.ofMillis(f.integer("shutdown-grace-ms",
        (int) GatewayConfig.DEFAULT_SHUTDOWN_GRACE.toMillis())));
    b.storeTimeout(Duration.ofMillis(f.integer("store-timeout-ms",
        (int) GatewayConfig.DEFAULT_STORE_TIMEOUT.toMillis())));
    if (f.has("response-timeout-ms")) {
      b.responseTimeout(Duration.ofMillis(f.integer("response-timeout-ms", 0)));
    }
    if (f.has("max-in-flight")) {
      b.maxInFlightPerBackend(f.integer("max-in-flight", 0));
    }
    b.maxHold(Duration.ofMillis(f.integer("max-hold-ms",
        (int) GatewayConfig.DEFAULT_MAX_HOLD.toMillis())));
    b.maxHeld(f.integer("max-held", GatewayConfig.DEFAULT_MAX_HELD));
    b.headerTimeout(Duration.ofMillis(f.integer("header-timeout-ms",
        (int) GatewayConfig.DEFAULT_HEADER_TIMEOUT.toMillis())));
    b.bodyTimeout(Duration.ofMillis(f.integer("body-timeout-ms",
        (int) GatewayConfig.DEFAULT_BODY_TIMEOUT.toMillis())));
    b.idleTimeout(Duration.ofMillis(f.integer("idle-timeout-ms",
        (int) GatewayConfig.DEFAULT_IDLE_TIMEOUT.toMillis())));
    b.maxHeaderBytes(f.integer("max-header-bytes", GatewayConfig.DEFAULT_MAX_HEADER_BYTES));
    b.maxHeaders(f.integer("max-headers", GatewayConfig.DEFAULT_MAX_HEADERS));
    b.maxThreads(f.integer("max-threads", GatewayConfig.DEFAULT_MAX_THREADS));
    String tokenizer = f.string("tokenizer", "text");
    switch (tokenizer) {
      case "text" -> b.tokenization(GatewayConfig.Tokenization.TEXT);
      case "engine" -> b.tokenization(GatewayConfig.Tokenization.ENGINE);
      case "local" -> b.tokenization(GatewayConfig.Tokenization.LOCAL);
      default -> throw new IllegalArgumentException("--tokenizer: " + tokenizer
          + " (expected: text, engine or local)");
    }
    for (String model : f.all("tokenizer-model")) {
      int eq = model.indexOf('=');
      if (eq <= 0 || eq == model.length() - 1) {
        throw new IllegalArgumentException("--tokenizer-model: " + model
            + " (expected: model=DIR, DIR holding tokenizer.json and tokenizer_config.json)");
      }
      b.tokenizerModel(model.substring(0, eq), java.nio.file.Path.of(model.substring(eq + 1)));
    }
    for (String events : f.all("kv-events")) {
      kvEvents(b, events);
    }
    return b.build();
  }

  /** {@code id=tcp://host:port[,replay=tcp://host:port]}. */
  private static void kvEvents(GatewayConfig.Builder b, String s) {
    int eq = s.indexOf('=');
    String[] parts = eq <= 0 ? new String[0] : s.substring(eq + 1).split(",", -1);
    if (parts.length == 0 || parts.length > 2
        || (parts.length == 2 && !parts[1].startsWith("replay="))) {
      throw new IllegalArgumentException("--kv-events: " + s
          + " (expected: id=tcp://host:port[,replay=tcp://host:port])");
    }
    try {
      b.kvEvents(s.substring(0, eq), new GatewayConfig.KvEvents(URI.create(parts[0]),
          parts.length == 2 ? Optional.of(URI.create(parts[1].substring("replay=".length())))
              : Optional.empty()));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--kv-events: " + s + ": " + e.getMessage(), e);
    }
  }

  private static InetSocketAddress hostPort(String s) {
    int colon = s.lastIndexOf(':');
    if (colon <= 0) {
      throw new IllegalArgumentException("--listen: " + s + " (expected: host:port)");
    }
    try {
      return new InetSocketAddress(s.substring(0, colon), Integer.parseInt(s.substring(colon + 1)));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("--listen: " + s + " (expected: host:port)", e);
    }
  }
}
