package io.affinityrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.core.TestClock;
import io.affinityrouter.redis.testing.RedisProcess;
import io.affinityrouter.spi.LoadExchange.Share;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Routers of two gateways exchanging their queued work through one real redis-server. */
class RedisLoadExchangeTest {
  private static final long NOW = 1_700_000_000_000L;
  private static RedisProcess server;
  private static RedisBindingStore gatewayA;
  private static RedisBindingStore gatewayB;

  @BeforeAll
  static void start() {
    server = RedisProcess.start();
    gatewayA = RedisBindingStore.builder().uri("redis://127.0.0.1:" + server.port()).build();
    gatewayB = RedisBindingStore.builder().uri("redis://127.0.0.1:" + server.port()).build();
  }

  @AfterAll
  static void stop() {
    gatewayA.close();
    gatewayB.close();
    server.close();
  }

  @BeforeEach
  void flush() {
    server.cli("flushall");
  }

  /** Calls {@code exchange} until it returns a non-empty view (the previous reply has landed). */
  private static Map<String, Double> awaitView(Supplier<Map<String, Double>> exchange) {
    return awaitView(exchange, v -> !v.isEmpty());
  }

  /** Calls {@code exchange} until its view passes {@code ready} (a reply one call old lands). */
  private static Map<String, Double> awaitView(Supplier<Map<String, Double>> exchange,
      java.util.function.Predicate<Map<String, Double>> ready) {
    long deadline = System.nanoTime() + 5_000_000_000L;
    Map<String, Double> v = exchange.get();
    while (!ready.test(v) && System.nanoTime() < deadline) {
      RedisProcess.sleep(10);
      v = exchange.get();
    }
    return v;
  }

  /** Waits until the exchange's hash has each field (their EVALs ran: replies are not awaited). */
  private static void awaitFields(String... fields) {
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (System.nanoTime() < deadline) {
      String keys = server.cli("hkeys", "ar:b:load");
      if (java.util.Arrays.stream(fields).allMatch(f -> keys.lines().anyMatch(f::equals))) {
        return;
      }
      RedisProcess.sleep(10);
    }
    throw new AssertionError("fields " + List.of(fields) + " never all appeared");
  }

  @Test
  void eachRouterSeesTheOthersPublicationsDrainedByAge() {
    RedisLoadExchange a = gatewayA.loadExchange();
    RedisLoadExchange b = gatewayB.loadExchange();
    RedisLoadExchange c = gatewayB.loadExchange();
    a.exchange("a", Map.of("r1", 2.0, "r2", 0.25), NOW);
    c.exchange("c", Map.of("r1", 1.0), NOW);
    awaitFields("a", "c");
    Map<String, Double> seenByB = awaitView(() -> b.exchange("b", Map.of("r1", 5.0), NOW + 100));
    assertThat(seenByB.get("r1")).isCloseTo(1.9 + 0.9, within(1e-9));
    assertThat(seenByB.get("r2")).isCloseTo(0.15, within(1e-9));
    // a sees b's and c's, never its own
    // a's previous reply was sent before b published; its next one has b's
    Map<String, Double> seenByA = awaitView(() -> a.exchange("a", Map.of(), NOW + 100),
        v -> v.getOrDefault("r1", 0.0) > 1);
    assertThat(seenByA.get("r1")).isCloseTo(5.0 + 0.9, within(1e-9));
    assertThat(seenByA).doesNotContainKey("r2");
    assertThat(server.cli("hlen", "ar:b:load").trim()).isEqualTo("3");
  }

  @Test
  void staleAndCorruptPublicationsAreIgnoredAndStalePublicationsRemoved() {
    RedisLoadExchange old = gatewayA.loadExchange();
    old.exchange("old", Map.of("r1", 100.0), NOW - 20_000);
    awaitFields("old");
    server.cli("hset", "ar:b:load", "junk", "not a publication");
    RedisLoadExchange a = gatewayA.loadExchange();
    a.exchange("a", Map.of("r2", 1.0), NOW);
    awaitFields("a");
    RedisLoadExchange b = gatewayB.loadExchange();
    Map<String, Double> view = awaitView(() -> b.exchange("b", Map.of(), NOW));
    assertThat(view).containsOnlyKeys("r2");
    String fields = server.cli("hkeys", "ar:b:load");
    assertThat(fields).doesNotContain("old").doesNotContain("junk").contains("a").contains("b");
    assertThat(Long.parseLong(server.cli("pttl", "ar:b:load").trim()))
        .isBetween(1L, RedisLoadExchange.DEFAULT_STALE_AFTER.toMillis());
  }

  @Test
  void whenRedisIsDownTheLastViewDrainsAndNothingIsThrown() {
    RedisProcess own = RedisProcess.start();
    try (RedisBindingStore store = RedisBindingStore.builder()
        .uri("redis://127.0.0.1:" + own.port()).commandTimeout(Duration.ofMillis(200)).build()) {
      RedisLoadExchange a = store.loadExchange();
      RedisLoadExchange b = store.loadExchange();
      a.exchange("a", Map.of("r1", 3.0), NOW);
      assertThat(awaitView(() -> b.exchange("b", Map.of(), NOW)).get("r1"))
          .isCloseTo(3.0, within(1e-9));
      own.kill();
      long before = b.failures();
      for (int i = 0; i < 3; i++) {
        Map<String, Double> v = b.exchange("b", Map.of(), NOW + 1_000);
        assertThat(v.get("r1")).isCloseTo(2.0, within(1e-9));
      }
      long deadline = System.nanoTime() + 5_000_000_000L;
      while (b.failures() == before && System.nanoTime() < deadline) {
        RedisProcess.sleep(20);
      }
      assertThat(b.failures()).isGreaterThan(before);
      assertThat(b.exchange("b", Map.of(), NOW + 5_000)).isEmpty(); // fully drained
    } finally {
      own.close();
    }
  }

  @Test
  void badInputIsRejectedWithTheReason() {
    RedisLoadExchange a = gatewayA.loadExchange();
    assertThatThrownBy(() -> a.exchange("", Map.of(), NOW))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("routerId: blank (expected: a non-blank string)");
    assertThatThrownBy(() -> a.exchange("a", Map.of("r1", Double.POSITIVE_INFINITY), NOW))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("queuedSeconds of r1: Infinity (expected: >= 0 and finite)");
    assertThat(server.cli("exists", "ar:b:load").trim()).isEqualTo("0");
  }

  @Test
  void encodingRoundTripsAndSkipsIdsItCannotCarry() {
    String v = RedisLoadExchange.encode(Map.of("r1", new Share(1.5, 0.25), "bad\tid",
        new Share(2.0, 1), "\u0001r2", new Share(1, 1), "zero", new Share(0, 0),
        "turns-only", new Share(0, 3)), 42);
    RedisLoadExchange.Publication p = RedisLoadExchange.decode("x", v);
    assertThat(p.atMillis()).isEqualTo(42);
    assertThat(p.shares()).containsOnly(Map.entry("r1", new Share(1.5, 0.25)),
        Map.entry("turns-only", new Share(0, 3)));
    assertThat(RedisLoadExchange.decode("x", "ar1|12\nr1")).isNull();
    assertThat(RedisLoadExchange.decode("x", "ar1|x")).isNull();
    assertThat(RedisLoadExchange.decode("x", "ar1|1\nr1\t-2")).isNull();
    assertThat(RedisLoadExchange.decode("x", "ar1|1\n\u0001\t2")).isNull();
    assertThat(RedisLoadExchange.decode("x", "ar1|1\n\u0001r1\tNaN")).isNull();
  }

  @Test
  void everyLineParsesAsTheQueuedSecondsOfAnOlderReader() {
    // an older router's reader takes each line as <replica id>\t<non-negative seconds> and drops a
    // publication with any other line: the turn lines must read as seconds of an unknown replica
    String v = RedisLoadExchange.encode(Map.of("r1", new Share(1.5, 0.25), "r2",
        new Share(0, 4)), 42);
    List<String> lines = v.lines().skip(1).toList();
    assertThat(lines).hasSize(3);
    for (String line : lines) {
      int tab = line.indexOf('\t');
      assertThat(tab).isPositive();
      assertThat(line.indexOf('\t', tab + 1)).isNegative();
      assertThat(Double.parseDouble(line.substring(tab + 1))).isNotNegative();
    }
    // and an older router's publication reads as queues without turns
    assertThat(RedisLoadExchange.decode("old", "ar1|7\nr1\t2.0").shares())
        .containsExactly(Map.entry("r1", new Share(2.0, 0)));
  }

  @Test
  void sessionTurnsAreSummedAsPublishedAndQueuesDrained() {
    RedisLoadExchange a = gatewayA.loadExchange();
    RedisLoadExchange c = gatewayA.loadExchange();
    RedisLoadExchange b = gatewayB.loadExchange();
    a.share("a", Map.of("r1", new Share(2.0, 3.0), "r2", new Share(0, 1.5)), NOW);
    c.share("c", Map.of("r1", new Share(0, 0.5)), NOW);
    server.cli("hset", "ar:b:load", "old", "ar1|" + NOW + "\nr2\t1.0"); // an older router
    awaitFields("a", "c", "old");
    Map<String, Share> seen = awaitShares(() -> b.share("b", Map.of(), NOW + 500));
    assertThat(seen.get("r1").queuedSeconds()).isCloseTo(1.5, within(1e-9));
    assertThat(seen.get("r1").sessionTurnsPerSecond()).isCloseTo(3.5, within(1e-9));
    assertThat(seen.get("r2").queuedSeconds()).isCloseTo(0.5, within(1e-9));
    assertThat(seen.get("r2").sessionTurnsPerSecond()).isCloseTo(1.5, within(1e-9));
    // the queue-only view of the same publications
    assertThat(b.exchange("b", Map.of(), NOW + 500)).containsOnlyKeys("r1", "r2");
  }

  /** Calls {@code share} until its view has three publications' worth (r1 and r2 present). */
  private static Map<String, Share> awaitShares(Supplier<Map<String, Share>> share) {
    long deadline = System.nanoTime() + 5_000_000_000L;
    Map<String, Share> v = share.get();
    while (!(v.containsKey("r1") && v.containsKey("r2")
        && v.get("r1").sessionTurnsPerSecond() > 3) && System.nanoTime() < deadline) {
      RedisProcess.sleep(10);
      v = share.get();
    }
    return v;
  }

  private static RoutingRequest prompt(long seed, int tokens) {
    SplittableRandom r = new SplittableRandom(seed);
    int[] t = new int[tokens];
    for (int i = 0; i < tokens; i++) {
      t[i] = r.nextInt(150_000);
    }
    return RoutingRequest.builder().promptTokens(t).expectedOutputTokens(100).build();
  }

  @Test
  void aGatewayAvoidsTheReplicaAnotherGatewayJustGaveALongPrompt() {
    TestClock clock = new TestClock(NOW); // both gateways' routers read it
    List<Replica> fleet = List.of(Replica.builder("r0").build(), Replica.builder("r1").build());
    Router a = AffinityRouter.builder().clock(clock).topK(1).bindingStore(gatewayA)
        .loadExchange(gatewayA.loadExchange(), "gateway-a", Duration.ofMillis(100)).build();
    Router b = AffinityRouter.builder().clock(clock).topK(1).bindingStore(gatewayB)
        .loadExchange(gatewayB.loadExchange(), "gateway-b", Duration.ofMillis(100)).build();
    RoutingDecision longOne = a.select(prompt(1, 65_536), fleet);
    clock.advance(Duration.ofMillis(100));
    a.select(prompt(2, 16), fleet).lease().close(); // publishes the long prefill
    long deadline = System.nanoTime() + 5_000_000_000L; // a's EVAL reached Redis
    while (!server.cli("hget", "ar:b:load", "gateway-a").contains("\t")
        && System.nanoTime() < deadline) {
      RedisProcess.sleep(10);
    }
    awaitFields("gateway-a");
    clock.advance(Duration.ofMillis(100));
    b.select(prompt(3, 16), fleet).lease().close(); // sends b's exchange; its reply carries a's
    RedisProcess.sleep(300);
    clock.advance(Duration.ofMillis(100));
    RoutingDecision d = b.select(prompt(4, 2_048), fleet);
    assertThat(d.replica().id()).isNotEqualTo(longOne.replica().id());
    assertThat(d.scores().queueSeconds()).isLessThan(0.1);
    a.close();
    b.close();
  }

  @Test
  void routersOnTheStoreUseItsExchangeUnlessToldNot() {
    TestClock clock = new TestClock(NOW);
    List<Replica> fleet = List.of(Replica.builder("r0").build(), Replica.builder("r1").build());
    try (RedisBindingStore store = RedisBindingStore.builder()
        .uri("redis://127.0.0.1:" + server.port()).build()) {
      assertThat(store.sharedLoadExchange()).containsSame(store.sharedLoadExchange().get());
      Router off = AffinityRouter.builder().clock(clock).bindingStore(store).noLoadExchange()
          .build();
      off.select(prompt(1, 4_096), fleet).lease().close();
      Router on = AffinityRouter.builder().clock(clock).bindingStore(store).build();
      on.select(prompt(2, 4_096), fleet); // queued, not closed: there is prefill to publish
      long deadline = System.nanoTime() + 5_000_000_000L;
      while (server.cli("hkeys", "ar:b:load").isBlank() && System.nanoTime() < deadline) {
        RedisProcess.sleep(10);
      }
      assertThat(server.cli("hkeys", "ar:b:load").trim())
          .as("one publisher: the default router, under a generated id").matches("router-[0-9a-f]+");
      off.close();
      on.close();
    }
  }
}
