package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.core.TestClock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class LeaseTest {
  private final TestClock clock = new TestClock();
  private final LoadTracker tracker = new LoadTracker(100, clock);

  private Lease open(ReplicaState s) {
    assertThat(s.tryAcquire(10, 10_000, 600)).isTrue();
    return tracker.open(s, 600, 500, 100);
  }

  @Test
  void closeReleasesEverythingOnce() {
    ReplicaState s = tracker.state("a");
    Lease lease = open(s);
    assertThat(s.inFlightRequests()).isEqualTo(1);
    assertThat(s.inFlightTokens()).isEqualTo(600);
    assertThat(s.pendingPrefillTokens()).isEqualTo(500);
    assertThat(s.pendingDecodeTokens()).isEqualTo(100);
    lease.close();
    lease.close();
    lease.complete(10);
    assertThat(lease.isClosed()).isTrue();
    assertThat(s.inFlightRequests()).isZero();
    assertThat(s.inFlightTokens()).isZero();
    assertThat(s.pendingPrefillTokens()).isZero();
    assertThat(s.pendingDecodeTokens()).isZero();
  }

  @Test
  void firstTokenMovesThePromptOutOfPrefillWork() {
    ReplicaState s = tracker.state("a");
    Lease lease = open(s);
    lease.markFirstToken();
    lease.markFirstToken();
    assertThat(s.pendingPrefillTokens()).isZero();
    assertThat(s.inFlightRequests()).isEqualTo(1);
    clock.advance(Duration.ofSeconds(2));
    lease.complete(200);
    assertThat(s.pendingPrefillTokens()).isZero();
    assertThat(s.inFlightRequests()).isZero();
    assertThat(s.decodeTokensPerSecondPerSequence())
        .isGreaterThan(LoadTracker.DECODE_RATE_PRIOR); // 100 tokens/s observed
  }

  @Test
  void queuedPrefillWorkDrainsInOrderAndLeavesWithItsLease() {
    ReplicaState s = tracker.state("q");
    assertThat(s.tryAcquire(10, 10_000, 600)).isTrue();
    Lease a = tracker.open(s, 600, 500, 100, 2.0);
    assertThat(s.tryAcquire(10, 10_000, 600)).isTrue();
    Lease b = tracker.open(s, 600, 500, 100, 1.0);
    assertThat(s.pendingPrefillSeconds(clock.millis())).isEqualTo(3.0);
    clock.advance(Duration.ofMillis(500));
    assertThat(s.pendingPrefillSeconds(clock.millis())).isEqualTo(2.5);
    a.markFirstToken(); // a's prefill is done: b's second is all that is left, from now
    assertThat(s.pendingPrefillSeconds(clock.millis())).isEqualTo(1.0);
    b.close(); // closed before its first token: its work leaves the queue
    assertThat(s.pendingPrefillSeconds(clock.millis())).isZero();
    a.complete(10);
    clock.advance(Duration.ofSeconds(5));
    assertThat(s.tryAcquire(10, 10_000, 600)).isTrue();
    Lease c = tracker.open(s, 600, 500, 100, 0.75); // an idle replica starts the new work now
    assertThat(s.pendingPrefillSeconds(clock.millis())).isEqualTo(0.75);
    c.complete(10); // finished without a first-token mark: its prefill is done too
    assertThat(s.pendingPrefillSeconds(clock.millis())).isZero();
  }

  @Test
  void negativeOutputIsRefused() {
    Lease lease = open(tracker.state("a"));
    assertThatThrownBy(() -> lease.complete(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("outputTokens: -1 (expected: >= 0)");
    assertThat(lease.isClosed()).isFalse();
  }

  @Test
  void concurrentClosesReleaseExactlyOnce() throws Exception {
    ReplicaState s = tracker.state("a");
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      for (int round = 0; round < 2000; round++) {
        Lease lease = open(s);
        CountDownLatch go = new CountDownLatch(1);
        for (int t = 0; t < 4; t++) {
          int which = t;
          pool.submit(() -> {
            go.await();
            switch (which) {
              case 0 -> lease.close();
              case 1 -> lease.complete(5);
              case 2 -> lease.markFirstToken();
              default -> lease.close();
            }
            return null;
          });
        }
        go.countDown();
        while (!lease.isClosed()) {
          Thread.onSpinWait();
        }
      }
      pool.shutdown();
      assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    } finally {
      pool.shutdownNow();
    }
    assertThat(s.inFlightRequests()).isZero();
    assertThat(s.inFlightTokens()).isZero();
    assertThat(s.pendingPrefillTokens()).isZero();
    assertThat(s.pendingDecodeTokens()).isZero();
  }

  @Test
  void limitsAreHonouredAndAnOversizedRequestRunsOnlyOnAnIdleReplica() {
    ReplicaState s = tracker.state("a");
    assertThat(s.tryAcquire(2, 1000, 5000)).isTrue(); // idle: admitted although over the limit
    assertThat(s.tryAcquire(2, 1000, 1)).isFalse(); // tokens full
    s.cancelAcquire(5000);
    assertThat(s.tryAcquire(2, 1000, 400)).isTrue();
    assertThat(s.tryAcquire(2, 1000, 400)).isTrue();
    assertThat(s.tryAcquire(2, 1000, 1)).isFalse(); // requests full
    assertThat(s.fits(2, 1000, 1)).isFalse();
  }
}
