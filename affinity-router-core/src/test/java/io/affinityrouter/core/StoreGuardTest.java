package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.core.StoreGuard.Admission;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class StoreGuardTest {
  private final TestClock clock = new TestClock();
  private final StoreGuard guard = new StoreGuard(clock, 500, 4000);

  private void failures(int n) {
    for (int i = 0; i < n; i++) {
      guard.onFailure(false);
    }
  }

  @Test
  void opensOnHalfTheWindowFailingAndLetsOneProbeThroughAfterTheBackoff() {
    assertThat(guard.admit()).isEqualTo(Admission.CALL);
    failures(StoreGuard.WINDOW_FAILURES - 1);
    assertThat(guard.isClosed()).isTrue();
    guard.onFailure(false);
    assertThat(guard.isClosed()).isFalse();
    assertThat(guard.admit()).isEqualTo(Admission.SKIP);
    clock.advance(Duration.ofMillis(500));
    assertThat(guard.admit()).isEqualTo(Admission.PROBE);
    assertThat(guard.admit()).isEqualTo(Admission.SKIP); // only one probe at a time
    guard.onSuccess(true);
    assertThat(guard.isClosed()).isTrue();
    assertThat(guard.admit()).isEqualTo(Admission.CALL);
  }

  @Test
  void failedProbesDoubleTheBackoffUpToTheMaximum() {
    failures(StoreGuard.WINDOW_FAILURES);
    long[] expected = {1000, 2000, 4000, 4000};
    clock.advance(Duration.ofMillis(500));
    for (long backoff : expected) {
      assertThat(guard.admit()).isEqualTo(Admission.PROBE);
      guard.onFailure(true);
      clock.advance(Duration.ofMillis(backoff - 1));
      assertThat(guard.admit()).isEqualTo(Admission.SKIP);
      clock.advance(Duration.ofMillis(1));
    }
    assertThat(guard.admit()).isEqualTo(Admission.PROBE);
    guard.onSuccess(true);
    failures(StoreGuard.WINDOW_FAILURES);
    clock.advance(Duration.ofMillis(500)); // the back-off was reset by the success
    assertThat(guard.admit()).isEqualTo(Admission.PROBE);
  }

  @Test
  void aFewLateAnswersAmongManyKeepItClosed() {
    java.util.SplittableRandom random = new java.util.SplittableRandom(7);
    for (int i = 0; i < 100_000; i++) {
      if (random.nextDouble() < 0.05) { // 5% of the answers late, scattered
        guard.onFailure(false);
      } else {
        guard.onSuccess(false);
      }
      assertThat(guard.isClosed()).as("after answer %d", i).isTrue();
    }
  }

  @Test
  void opensWhenHalfOfTheRecentAnswersFail() {
    for (int i = 0; i < StoreGuard.WINDOW; i++) {
      assertThat(guard.isClosed()).as("after %d answers", i).isTrue();
      if (i % 2 == 0) {
        guard.onSuccess(false);
      } else {
        guard.onFailure(false);
      }
    }
    assertThat(guard.isClosed()).isFalse(); // never two in a row, but half of the window
  }
}
