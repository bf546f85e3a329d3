package io.affinityrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.redis.testing.LatencyProxy;
import io.affinityrouter.redis.testing.RedisClusterProcesses;
import io.affinityrouter.redis.testing.RedisProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Gateways sharing a lifecycle lease through one real redis-server. */
class RedisLifecycleLeaseTest {
  private static final String KEY = "ar:b:lease:lifecycle";
  private static final Duration LONG = Duration.ofSeconds(30);
  /** Generous: how long a call may take on a busy machine when its time is not the subject. */
  private static final long WAIT_SECONDS = 20;
  private static RedisProcess server;
  private static RedisBindingStore gatewayA;
  private static RedisBindingStore gatewayB;

  @BeforeAll
  static void start() {
    server = RedisProcess.start();
    gatewayA = store("redis://127.0.0.1:" + server.port());
    gatewayB = store("redis://127.0.0.1:" + server.port());
  }

  /** A command timeout far above any pause of a busy machine: no call here should fail. */
  private static RedisBindingStore store(String uri) {
    return RedisBindingStore.builder().uri(uri).commandTimeout(Duration.ofSeconds(WAIT_SECONDS))
        .build();
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

  private static <T> T join(CompletionStage<T> stage) {
    try {
      return stage.toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new AssertionError(e);
    }
  }

  private static long token(CompletionStage<OptionalLong> acquired) {
    OptionalLong t = join(acquired);
    assertThat(t).as("acquired").isPresent();
    return t.getAsLong();
  }

  @Test
  void ofHoldersRacingForAFreeLeaseExactlyOneGetsItAndOnlyItsTokenIsCurrent() throws Exception {
    RedisLifecycleLease[] leases = {gatewayA.lifecycleLease("lifecycle"),
        gatewayB.lifecycleLease("lifecycle")};
    int threads = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      long previous = 0;
      for (int step = 0; step < 40; step++) {
        CountDownLatch go = new CountDownLatch(1);
        List<Future<OptionalLong>> tries = new ArrayList<>();
        for (int i = 0; i < threads; i++) {
          RedisLifecycleLease lease = leases[i % 2];
          String holder = "g" + i;
          tries.add(pool.submit(() -> {
            go.await();
            return join(lease.acquire(holder, LONG));
          }));
        }
        go.countDown();
        int winner = -1;
        long token = 0;
        for (int i = 0; i < threads; i++) {
          OptionalLong t = tries.get(i).get(WAIT_SECONDS, TimeUnit.SECONDS);
          if (t.isPresent()) {
            assertThat(winner).as("step %d: a second holder got the lease", step).isEqualTo(-1);
            winner = i;
            token = t.getAsLong();
          }
        }
        assertThat(winner).as("step %d: someone gets a free lease", step).isNotEqualTo(-1);
        assertThat(token).isGreaterThan(previous);
        for (int i = 0; i < threads; i++) {
          for (RedisLifecycleLease lease : leases) {
            assertThat(join(lease.isCurrent("g" + i, token))).as("step %d, g%d", step, i)
                .isEqualTo(i == winner);
          }
        }
        // a loser asking again is still refused; the winner renews its own token
        assertThat(join(leases[(winner + 1) % 2].acquire("g" + ((winner + 1) % threads), LONG)))
            .isEmpty();
        assertThat(join(leases[(winner + 1) % 2].acquire("g" + winner, LONG)))
            .hasValue(token);
        join(leases[step % 2].release("g" + winner, token));
        previous = token;
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** A successful acquire or true isCurrent of a token: it was live between send and reply. */
  private record Seen(String holder, long token, long sentNanos, long repliedNanos,
      boolean acquire) {}

  @Test
  void underContentionWithAShortTtlHoldingsNeverOverlap() throws Exception {
    Duration ttl = Duration.ofMillis(40);
    long ttlNanos = ttl.toNanos();
    RedisLifecycleLease[] leases = {gatewayA.lifecycleLease("lifecycle"),
        gatewayB.lifecycleLease("lifecycle")};
    int threads = 6;
    ConcurrentLinkedQueue<Seen> seen = new ConcurrentLinkedQueue<>();
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<?>> runs = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      RedisLifecycleLease lease = leases[i % 2];
      String holder = "g" + i;
      SplittableRandom random = new SplittableRandom(i);
      runs.add(pool.submit(() -> {
        int renewals = 0;
        while (System.nanoTime() < end) {
          long sent = System.nanoTime();
          OptionalLong t = join(lease.acquire(holder, ttl));
          long replied = System.nanoTime();
          if (t.isEmpty()) {
            RedisProcess.sleep(random.nextInt(5));
            continue;
          }
          seen.add(new Seen(holder, t.getAsLong(), sent, replied, true));
          long checkSent = System.nanoTime();
          boolean current = join(lease.isCurrent(holder, t.getAsLong()));
          if (current) {
            seen.add(new Seen(holder, t.getAsLong(), checkSent, System.nanoTime(), false));
          }
          if (++renewals < 1 + random.nextInt(5)) {
            RedisProcess.sleep(10); // renews well within the ttl (unless the machine stalls)
          } else {
            renewals = 0;
            RedisProcess.sleep(60 + random.nextInt(40)); // stops renewing: someone takes over
          }
        }
        return null;
      }));
    }
    for (Future<?> run : runs) {
      run.get(60, TimeUnit.SECONDS);
    }
    pool.shutdownNow();

    // one holder per token; per token, when its holding was first granted and last renewed
    TreeMap<Long, String> holderOf = new TreeMap<>();
    TreeMap<Long, Long> firstGrantReply = new TreeMap<>();
    TreeMap<Long, Long> lastRenewSent = new TreeMap<>();
    TreeMap<Long, Long> lastSeenSent = new TreeMap<>();
    for (Seen s : seen) {
      String before = holderOf.putIfAbsent(s.token(), s.holder());
      assertThat(before == null ? s.holder() : before).as("holder of token %d", s.token())
          .isEqualTo(s.holder());
      lastSeenSent.merge(s.token(), s.sentNanos(), Math::max);
      if (s.acquire()) {
        firstGrantReply.merge(s.token(), s.repliedNanos(), Math::min);
        lastRenewSent.merge(s.token(), s.sentNanos(), Math::max);
      }
    }
    assertThat(holderOf.size()).as("holdings (takeovers happened)").isGreaterThanOrEqualTo(3);
    // Tokens grow in the server's order of grants, so holding k+1 began after holding k ended.
    long slackNanos = TimeUnit.MILLISECONDS.toNanos(2); // ms rounding of the server's clock
    Long previous = null;
    for (Map.Entry<Long, Long> grant : firstGrantReply.entrySet()) {
      long token = grant.getKey();
      if (previous != null) {
        // no observation of an older holding was even sent after a newer one was granted
        long newest = lastSeenSent.headMap(token, false).values().stream()
            .mapToLong(Long::longValue).max().orElseThrow();
        assertThat(newest).as("older holdings seen live after token %d was granted", token)
            .isLessThan(grant.getValue());
        // and the newer one was not granted before the older one's ttl ran out
        assertThat(grant.getValue() + slackNanos)
            .as("token %d granted before token %d expired", token, previous)
            .isGreaterThanOrEqualTo(lastRenewSent.get(previous) + ttlNanos);
      }
      previous = token;
    }
  }

  @Test
  void whenTheHolderStopsRenewingAnotherTakesOverAfterTheTtl() {
    RedisLifecycleLease a = gatewayA.lifecycleLease("lifecycle");
    RedisLifecycleLease b = gatewayB.lifecycleLease("lifecycle");
    Duration ttl = Duration.ofMillis(300);
    long sent = System.nanoTime();
    long tokenA = token(a.acquire("a", ttl));
    OptionalLong tokenB = OptionalLong.empty();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (tokenB.isEmpty() && System.nanoTime() < deadline) {
      tokenB = join(b.acquire("b", LONG));
      if (tokenB.isEmpty()) {
        RedisProcess.sleep(10);
      }
    }
    long took = System.nanoTime() - sent;
    assertThat(tokenB).as("b took over").isPresent();
    assertThat(took).as("not before a's ttl ran out")
        .isGreaterThanOrEqualTo(ttl.toNanos() - TimeUnit.MILLISECONDS.toNanos(2));
    assertThat(tokenB.getAsLong()).isGreaterThan(tokenA);
    assertThat(join(a.isCurrent("a", tokenA))).isFalse();
    assertThat(join(a.acquire("a", ttl))).as("a asks again: b holds it").isEmpty();
    join(a.release("a", tokenA));
    join(a.release("b", tokenA)); // the right holder with a wrong token changes nothing either
    assertThat(join(b.isCurrent("b", tokenB.getAsLong()))).isTrue();
    assertThat(server.cli("hget", KEY, "holder")).isEqualTo("b");
  }

  @Test
  void renewingKeepsTheTokenAndEveryNewHoldingGetsALargerOne() {
    RedisLifecycleLease a = gatewayA.lifecycleLease("lifecycle");
    long t1 = token(a.acquire("a", LONG));
    assertThat(t1).isPositive();
    assertThat(join(a.acquire("a", LONG))).hasValue(t1);
    assertThat(join(gatewayB.lifecycleLease("lifecycle").acquire("a", LONG)))
        .as("the holder is its name, whichever gateway asks").hasValue(t1);
    assertThat(Long.parseLong(server.cli("pttl", KEY))).as("the key never expires").isEqualTo(-1);

    join(a.release("a", t1));
    assertThat(join(a.isCurrent("a", t1))).isFalse();
    assertThat(server.cli("hexists", KEY, "holder")).isEqualTo("0");
    assertThat(server.cli("hget", KEY, "token")).isEqualTo(Long.toString(t1));
    long t2 = token(a.acquire("a", LONG));
    assertThat(t2).isGreaterThan(t1);

    // after expiry
    join(a.release("a", t2));
    long t3 = token(a.acquire("a", Duration.ofMillis(50)));
    assertThat(t3).isGreaterThan(t2);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (join(a.isCurrent("a", t3)) && System.nanoTime() < deadline) {
      RedisProcess.sleep(10);
    }
    assertThat(join(a.isCurrent("a", t3))).as("expired").isFalse();
    long t4 = token(a.acquire("a", LONG));
    assertThat(t4).as("a lapsed holding is not renewed: a new one starts").isGreaterThan(t3);

    // the stored token counts, ahead of the clock
    join(a.release("a", t4));
    long ahead = 8_000_000_000_000_000L;
    server.cli("hset", KEY, "token", Long.toString(ahead));
    assertThat(token(a.acquire("a", LONG))).isEqualTo(ahead + 1);

    // and with the key lost (a restart without persistence) tokens still grow, from the clock
    server.cli("flushall");
    long t5 = token(a.acquire("a", LONG));
    assertThat(t5).isGreaterThan(t4);
  }

  @Test
  void scriptsAreSentAgainAfterTheServerForgetsThem() {
    RedisLifecycleLease a = gatewayA.lifecycleLease("lifecycle");
    long t = token(a.acquire("a", LONG));
    server.cli("script", "flush");
    assertThat(join(a.isCurrent("a", t))).isTrue();
    server.cli("script", "flush");
    assertThat(join(a.acquire("a", LONG))).hasValue(t);
    server.cli("script", "flush");
    join(a.release("a", t));
    assertThat(join(a.isCurrent("a", t))).isFalse();
  }

  @Test
  void namesAndPrefixesAreSeparateLeases() {
    long one = token(gatewayA.lifecycleLease("one").acquire("a", LONG));
    assertThat(token(gatewayB.lifecycleLease("two").acquire("b", LONG))).isPositive();
    try (RedisBindingStore other = RedisBindingStore.builder()
        .uri("redis://127.0.0.1:" + server.port()).keyPrefix("other:").build()) {
      assertThat(token(other.lifecycleLease("one").acquire("c", LONG))).isPositive();
      assertThat(server.cli("hget", "other:lease:one", "holder")).isEqualTo("c");
    }
    assertThat(join(gatewayA.lifecycleLease("one").isCurrent("a", one))).isTrue();
    assertThat(server.cli("hget", "ar:b:lease:two", "holder")).isEqualTo("b");
  }

  @Test
  void aValueOfAnotherTypeFailsTheStageAndIsLeftAlone() {
    server.cli("set", KEY, "not a lease");
    RedisLifecycleLease a = gatewayA.lifecycleLease("lifecycle");
    assertFails(a.acquire("a", LONG));
    assertFails(a.isCurrent("a", 1));
    assertFails(a.release("a", 1));
    assertThat(server.cli("get", KEY)).isEqualTo("not a lease");
  }

  private static Throwable assertFails(CompletionStage<?> stage) {
    CompletableFuture<?> f = stage.toCompletableFuture();
    try {
      f.get(WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (Exception e) {
      throw new AssertionError("the stage did not complete exceptionally in time", e);
    }
    throw new AssertionError("the stage completed normally");
  }

  @Test
  void whenRedisStallsOrIsDownCallsFailTheirStageWithoutThrowing() {
    RedisProcess own = RedisProcess.start();
    LatencyProxy proxy = new LatencyProxy(own.port());
    RedisBindingStore store = RedisBindingStore.builder().uri(proxy.uri())
        .commandTimeout(Duration.ofMillis(200)).reconnectMaxDelay(Duration.ofMillis(200)).build();
    try {
      RedisLifecycleLease lease = store.lifecycleLease("lifecycle");
      long t = token(lease.acquire("a", LONG));

      proxy.stall(true);
      assertThat(assertFails(lease.acquire("a", LONG)))
          .isInstanceOf(io.lettuce.core.RedisCommandTimeoutException.class);
      assertFails(lease.isCurrent("a", t));
      assertFails(lease.release("a", t));
      proxy.stall(false);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
      boolean back = false;
      while (!back && System.nanoTime() < deadline) {
        back = lease.acquire("a", LONG).toCompletableFuture().handle((v, e) -> e == null
            && v.equals(OptionalLong.of(t))).join();
        if (!back) {
          RedisProcess.sleep(20);
        }
      }
      assertThat(back).as("works again, same holding").isTrue();

      own.kill();
      assertFails(lease.acquire("a", LONG));
      assertFails(lease.isCurrent("a", t));
      assertFails(lease.release("a", t));

      store.close();
      assertFails(lease.acquire("a", LONG)); // a closed store: the stage fails, nothing thrown
    } finally {
      store.close();
      proxy.close();
      own.close();
    }
  }

  @Test
  void onAClusterEachLeaseIsOneKeyWhateverItsSlot() {
    try (RedisClusterProcesses cluster = new RedisClusterProcesses(3)) {
      RedisBindingStore a = RedisBindingStore.builder().clusterUris(List.of(cluster.seed()))
          .commandTimeout(Duration.ofSeconds(WAIT_SECONDS)).build();
      RedisBindingStore b = RedisBindingStore.builder().clusterUris(List.of(cluster.seed()))
          .commandTimeout(Duration.ofSeconds(WAIT_SECONDS)).build();
      try {
        for (int i = 0; i < 12; i++) { // names spread over the three masters' slots
          RedisLifecycleLease la = a.lifecycleLease("lifecycle-" + i);
          RedisLifecycleLease lb = b.lifecycleLease("lifecycle-" + i);
          long t = token(la.acquire("a", LONG));
          assertThat(join(lb.acquire("b", LONG))).isEmpty();
          assertThat(join(lb.isCurrent("a", t))).isTrue();
          join(la.release("a", t));
          assertThat(token(lb.acquire("b", LONG))).isGreaterThan(t);
        }
      } finally {
        a.close();
        b.close();
      }
    }
  }

  @Test
  void closingTheLeaseLeavesTheStoreOpen() {
    RedisLifecycleLease a = gatewayA.lifecycleLease("lifecycle");
    assertThat(a).hasToString("RedisLifecycleLease{" + KEY + "}");
    long t = token(a.acquire("a", LONG));
    a.close();
    assertThat(join(gatewayA.lifecycleLease("lifecycle").isCurrent("a", t))).isTrue();
    assertThat(join(gatewayA.get(new io.affinityrouter.spi.BindingKey("m", "t", "s")))).isEmpty();
  }

  @Test
  void badArgumentsAreRejectedWithTheReasonBeforeAnythingIsSent() {
    RedisLifecycleLease a = gatewayA.lifecycleLease("lifecycle");
    assertThatThrownBy(() -> a.acquire(" ", LONG)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("holder: blank (expected: a non-blank string)");
    assertThatThrownBy(() -> a.acquire(null, LONG)).isInstanceOf(NullPointerException.class)
        .hasMessage("holder");
    assertThatThrownBy(() -> a.acquire("a", Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("ttl: PT0S (expected: > 0)");
    assertThatThrownBy(() -> a.acquire("a", Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("ttl: PT-1S (expected: > 0)");
    assertThatThrownBy(() -> a.acquire("a", Duration.ofNanos(999_999)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("ttl: PT0.000999999S (expected: >= 1ms)");
    assertThatThrownBy(() -> a.acquire("a", null)).isInstanceOf(NullPointerException.class)
        .hasMessage("ttl");
    assertThatThrownBy(() -> a.isCurrent("", 1)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("holder: blank (expected: a non-blank string)");
    assertThatThrownBy(() -> a.isCurrent("a", 0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("token: 0 (expected: > 0)");
    assertThatThrownBy(() -> a.release("a", -3)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("token: -3 (expected: > 0)");
    assertThatThrownBy(() -> gatewayA.lifecycleLease(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("name: blank (expected: a non-blank string)");
    assertThat(server.cli("exists", KEY)).isEqualTo("0");
    // the longest ttl a Duration holds is accepted
    assertThat(token(a.acquire("a", Duration.ofSeconds(Long.MAX_VALUE)))).isPositive();
  }
}
