package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.core.lifecycle.ModelClaim;
import io.affinityrouter.examples.cli.Flags;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads a {@link GatewayConfig} from the command line ({@link GatewayConfig#fromArgs}). */
final class GatewayFlags {
  private static final Pattern SIZE =
      Pattern.compile("(-?[0-9]+(?:\\.[0-9]+)?)\\s*(B|KiB|MiB|GiB|TiB)?");
  private static final Pattern DURATION = Pattern.compile("(-?[0-9]+)\\s*(ms|s|m|h)");
  private static final Set<String> CLAIM_KEYS =
      Set.of("model", "memory", "min", "max", "idle", "level");

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
        "max-header-bytes", "max-headers", "max-threads", "tokenizer", "tokenizer-model", "kv-events",
        "claim", "gpu-memory", "gpu-group", "wake-cooldown-ms", "lifecycle-interval-ms",
        "gateway-id"));
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
    lifecycle(f, b);
    return b.build();
  }

  /** The model claims and the lifecycle's GPU memory, grouping and timings. */
  private static void lifecycle(Flags f, GatewayConfig.Builder b) {
    for (String claim : f.all("claim")) {
      b.claim(claim(claim));
    }
    boolean everyGroup = false;
    for (String memory : f.all("gpu-memory")) {
      int eq = memory.indexOf('=');
      if (eq < 0) {
        if (everyGroup) {
          throw new IllegalArgumentException("--gpu-memory: " + memory
              + " (expected: one SIZE for every group, and GROUP=SIZE for others)");
        }
        everyGroup = true;
        b.gpuMemoryBytes(size(memory, "--gpu-memory"));
      } else if (eq == 0) {
        throw new IllegalArgumentException("--gpu-memory: " + memory
            + " (expected: SIZE or GROUP=SIZE)");
      } else {
        String group = memory.substring(0, eq);
        b.gpuMemoryBytes(group, size(memory.substring(eq + 1), "--gpu-memory " + group));
      }
    }
    String group = f.string("gpu-group", "replica");
    switch (group) {
      case "replica" -> b.gpuGrouping(GatewayConfig.GpuGrouping.REPLICA);
      case "host" -> b.gpuGrouping(GatewayConfig.GpuGrouping.HOST);
      default -> throw new IllegalArgumentException("--gpu-group: " + group
          + " (expected: replica or host)");
    }
    if (f.has("wake-cooldown-ms")) {
      b.wakeCooldown(Duration.ofMillis(f.integer("wake-cooldown-ms", 0)));
    }
    if (f.has("lifecycle-interval-ms")) {
      b.lifecycleInterval(Duration.ofMillis(f.integer("lifecycle-interval-ms", 0)));
    }
    if (f.has("gateway-id")) {
      b.gatewayId(f.string("gateway-id", null));
    }
  }

  /** {@code model=NAME,memory=SIZE[,min=N][,max=N][,idle=DURATION][,level=1|2]}. */
  static ModelClaim claim(String s) {
    Map<String, String> values = new HashMap<>();
    for (String part : s.split(",", -1)) {
      int eq = part.indexOf('=');
      String key = eq <= 0 ? part : part.substring(0, eq);
      if (eq <= 0 || !CLAIM_KEYS.contains(key)) {
        throw new IllegalArgumentException("--claim " + s + ": " + (eq <= 0 ? part : key)
            + " (expected: model=NAME,memory=SIZE[,min=N][,max=N][,idle=DURATION][,level=1|2])");
      }
      if (values.putIfAbsent(key, part.substring(eq + 1)) != null) {
        throw new IllegalArgumentException("--claim " + s + ": " + key + " given twice");
      }
    }
    String model = values.get("model");
    if (model == null || model.isBlank()) {
      throw new IllegalArgumentException("--claim " + s + ": claim model: "
          + (model == null ? "missing" : "blank") + " (expected: model=NAME)");
    }
    String memory = values.get("memory");
    if (memory == null) {
      throw new IllegalArgumentException("--claim " + s
          + ": claim memory: missing (expected: memory=SIZE, e.g. 30GiB)");
    }
    ModelClaim.Builder c = ModelClaim.builder(model).gpuMemoryBytes(size(memory,
        "--claim " + s + ": claim memory"));
    int min = ModelClaim.DEFAULT_MIN_AWAKE;
    if (values.containsKey("min")) {
      min = count(values.get("min"), "--claim " + s + ": claim min", 0);
      c.minAwake(min);
    }
    if (values.containsKey("max")) {
      int max = count(values.get("max"), "--claim " + s + ": claim max", 1);
      if (min > max) {
        throw new IllegalArgumentException("--claim " + s + ": claim min: " + min
            + " (expected: <= max " + max + ")");
      }
      c.maxAwake(max);
    }
    if (values.containsKey("idle")) {
      c.idleTimeout(duration(values.get("idle"), "--claim " + s + ": claim idle"));
    }
    if (values.containsKey("level")) {
      String level = values.get("level");
      if (!level.equals("1") && !level.equals("2")) {
        throw new IllegalArgumentException("--claim " + s + ": claim level: " + level
            + " (expected: 1 or 2)");
      }
      c.sleepLevel(Integer.parseInt(level));
    }
    return c.build();
  }

  /**
   * A size in bytes: a number, optionally with an IEC unit ({@code B}, {@code KiB}, {@code MiB},
   * {@code GiB}, {@code TiB}): {@code 30GiB}, {@code 1.5TiB}, {@code 1073741824}.
   */
  static long size(String s, String name) {
    Matcher m = SIZE.matcher(s.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException(name + ": " + s
          + " (expected: a size such as 30GiB, 512MiB or 1073741824)");
    }
    BigDecimal n = new BigDecimal(m.group(1));
    int shift = switch (m.group(2) == null ? "B" : m.group(2)) {
      case "KiB" -> 10;
      case "MiB" -> 20;
      case "GiB" -> 30;
      case "TiB" -> 40;
      default -> 0;
    };
    BigDecimal bytes = n.multiply(BigDecimal.valueOf(2).pow(shift));
    if (bytes.signum() <= 0 || bytes.compareTo(BigDecimal.ONE) < 0) {
      throw new IllegalArgumentException(name + ": " + s + " (expected: > 0)");
    }
    if (bytes.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
      throw new IllegalArgumentException(name + ": " + s + " (expected: < 8 EiB)");
    }
    return bytes.longValue();
  }

  /** A duration: a whole number with {@code ms}, {@code s}, {@code m} or {@code h}. */
  static Duration duration(String s, String name) {
    Matcher m = DURATION.matcher(s.trim());
    if (!m.matches()) {
      throw new IllegalArgumentException(name + ": " + s
          + " (expected: a duration such as 1500ms, 30s, 5m or 1h)");
    }
    long n;
    try {
      n = Long.parseLong(m.group(1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + ": " + s + " (expected: a smaller number)", e);
    }
    if (n <= 0) {
      throw new IllegalArgumentException(name + ": " + s + " (expected: > 0)");
    }
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      default -> Duration.ofHours(n);
    };
  }

  private static int count(String s, String name, int least) {
    int n;
    try {
      n = Integer.parseInt(s.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + ": " + s + " (expected: a whole number)", e);
    }
    if (n < least) {
      throw new IllegalArgumentException(name + ": " + s + " (expected: "
          + (least == 0 ? ">= 0" : "> " + (least - 1)) + ")");
    }
    return n;
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
