package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.core.TestClock;
import io.affinityrouter.core.StoreGuard.Admission;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class StoreGuardTest {
  private final TestClock clock = new TestClock();
  private final StoreGuard guard = new StoreGuard(clock, 500, 4000);

  @Test
  void opensOnFailureAndLetsOneProbeThroughAfterTheBackoff() {
    assertThat(guard.admit()).isEqualTo(Admission.CALL);
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
    guard.onFailure(false);
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
    guard.onFailure(false);
    clock.advance(Duration.ofMillis(500)); // the back-off was reset by the success
    assertThat(guard.admit()).isEqualTo(Admission.PROBE);
  }
}
