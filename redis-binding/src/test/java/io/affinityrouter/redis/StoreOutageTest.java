package io.affinityrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.redis.testing.RedisProcess;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.lettuce.core.RedisCommandTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The store itself through a Redis shutdown/restart and a SIGSTOP/SIGCONT pause: no method throws,
 * every stage completes within the command timeout (plus scheduling slack), commands are rejected
 * rather than queued without bound, and the store works again after Redis returns.
 */
class StoreOutageTest {

  private static final Duration TIMEOUT = Duration.ofMillis(100);
  /** Slack for timer granularity and a busy 2-core machine: calls end, they do not hang. */
  private static final long SLACK_MS = 400;
  private static final Duration TTL = Duration.ofMinutes(5);

  private RedisProcess server;
  private RedisBindingStore store;

  @BeforeEach
  void start() {
    server = RedisProcess.start();
    store = RedisBindingStore.builder().uri("redis://127.0.0.1:" + server.port())
        .commandTimeout(TIMEOUT).reconnectMaxDelay(Duration.ofMillis(200)).requestQueueSize(64)
        .build();
  }

  @AfterEach
  void stop() {
    store.close();
    server.close();
  }

  /** Traffic for {@code millis}: one call at a time; returns [ok, failed] and records latencies. */
  private int[] traffic(long millis, Histogram latencyMicros, AtomicInteger thrown) {
    int ok = 0;
    int failed = 0;
    long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    int i = 0;
    while (System.nanoTime() < end) {
      long start = System.nanoTime();
      try {
        store.getOrClaim(new BindingKey("m", "t", "s" + (i++ % 100)), "r1", TTL)
            .toCompletableFuture().get(5, TimeUnit.SECONDS);
        ok++;
      } catch (java.util.concurrent.ExecutionException e) {
        failed++;
      } catch (Exception e) {
        thrown.incrementAndGet();
      }
      latencyMicros.recordValue(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - start));
      RedisProcess.sleep(5);
    }
    return new int[] {ok, failed};
  }

  @Test
  void shutdownAndRestartFailFastThenRecover() {
    Histogram down = new Histogram(3);
    AtomicInteger thrown = new AtomicInteger();
    int[] before = traffic(300, new Histogram(3), thrown);
    server.kill();
    int[] during = traffic(2_000, down, thrown);
    server.restart();
    long restartedAt = System.nanoTime();
    int[] after = traffic(3_000, new Histogram(3), thrown);
    print("shutdown", down, during);

    assertThat(thrown).hasValue(0);
    assertThat(before[1]).isZero();
    assertThat(during[0]).isZero();
    assertThat(down.getMaxValue() / 1000).isLessThanOrEqualTo(TIMEOUT.toMillis() + SLACK_MS);
    assertThat(after[0]).isPositive();
    // Works again (scripts reloaded after NOSCRIPT on the fresh server).
    Binding b = store.getOrClaim(new BindingKey("m", "t", "after"), "r2", TTL)
        .toCompletableFuture().join();
    assertThat(b.replicaId()).isEqualTo("r2");
    assertThat(store.stats().scriptReloads()).isPositive();
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restartedAt)).isPositive();
  }

  @Test
  void pausedServerCostsAtMostTheTimeoutPerCallAndQueuesAreBounded() throws Exception {
    Histogram paused = new Histogram(3);
    AtomicInteger thrown = new AtomicInteger();
    traffic(200, new Histogram(3), thrown);
    server.pause();
    int[] during;
    List<CompletableFuture<Binding>> burst = new ArrayList<>();
    try {
      during = traffic(1_500, paused, thrown);
      // A burst while paused: beyond the request queue, calls are rejected at once, not queued.
      long start = System.nanoTime();
      for (int i = 0; i < 500; i++) {
        burst.add(store.getOrClaim(new BindingKey("m", "t", "burst" + i), "r1", TTL)
            .toCompletableFuture());
      }
      long issueMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertThat(issueMillis).isLessThan(1_000);
      // Rejected, not timed out: the calls past the queue fail with the queue's error, whatever
      // the time a busy machine takes to say so.
      for (CompletableFuture<Binding> f : burst) {
        f.handle((v, e) -> null).get(5, TimeUnit.SECONDS);
      }
      long rejected = burst.stream().filter(f -> f.handle((v, e) -> e != null
          && !(BindingScripts.unwrap(e) instanceof RedisCommandTimeoutException)).join()).count();
      long timedOut = burst.stream().filter(f -> f.handle((v, e) -> e != null
          && BindingScripts.unwrap(e) instanceof RedisCommandTimeoutException).join()).count();
      System.out.printf("pause burst: 500 calls issued in %d ms, %d rejected by the full queue"
          + " (64), %d timed out%n", issueMillis, rejected, timedOut);
      // Every call ended, none waited in an unbounded queue: the ones past the queue's 64 were
      // refused (how many depends on how fast a busy machine issued them against the timeout).
      assertThat(rejected + timedOut).isEqualTo(500);
      assertThat(rejected).isPositive();
    } finally {
      server.resume();
    }
    // Redis first works off what was sent before the pause; then every call succeeds again.
    long resumed = System.nanoTime();
    while (store.getOrClaim(new BindingKey("m", "t", "probe"), "r1", TTL).toCompletableFuture()
        .handle((v, e) -> e == null).get(5, TimeUnit.SECONDS) == Boolean.FALSE) {
      assertThat(System.nanoTime() - resumed).isLessThan(TimeUnit.SECONDS.toNanos(2));
    }
    System.out.printf("SIGCONT: calls succeed again %d ms after the resume%n",
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - resumed));
    int[] after = traffic(1_000, new Histogram(3), thrown);
    print("SIGSTOP", paused, during);

    assertThat(thrown).hasValue(0);
    assertThat(during[0]).isZero();
    assertThat(paused.getMaxValue() / 1000).isLessThanOrEqualTo(TIMEOUT.toMillis() + SLACK_MS);
    assertThat(paused.getValueAtPercentile(50) / 1000).isGreaterThanOrEqualTo(TIMEOUT.toMillis() - 5);
    assertThat(after[1]).as("failures after recovery").isZero();
    assertThat(after[0]).isPositive();
  }

  private static void print(String what, Histogram h, int[] okFailed) {
    System.out.printf("%s: %d calls while down, %d ok, %d failed; latency ms p50 %.1f p99 %.1f max %.1f"
        + " (timeout %d ms)%n", what, h.getTotalCount(), okFailed[0], okFailed[1],
        h.getValueAtPercentile(50) / 1000.0, h.getValueAtPercentile(99) / 1000.0,
        h.getMaxValue() / 1000.0, TIMEOUT.toMillis());
  }
}
