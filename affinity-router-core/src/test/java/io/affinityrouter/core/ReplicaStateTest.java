package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** The engine write-counter rate kept by {@link ReplicaState}. */
class ReplicaStateTest {
  private final ReplicaState state = new ReplicaState("r", 0, 30);

  @Test
  void unknownUntilTheCounterHasBeenSeenToMove() {
    assertThat(state.engineWrittenTokensPerSecond(0)).isEqualTo(-1);
    state.observeEngineWritten(-1, 0); // not reported
    assertThat(state.engineWrittenTokensPerSecond(1_000)).isEqualTo(-1);
    state.observeEngineWritten(1_000_000, 0); // first sight: the base, not a rate
    assertThat(state.engineWrittenTokensPerSecond(1_000)).isEqualTo(-1);
    state.observeEngineWritten(1_010_000, 1_000);
    assertThat(state.engineWrittenTokensPerSecond(1_000)).isCloseTo(10_000, within(100.0));
  }

  @Test
  void aSteadyRateIsMeasuredFromTheFirstSecondsOn() {
    long counter = 0;
    state.observeEngineWritten(counter, 0);
    for (int s = 1; s <= 300; s++) {
      counter += 5_000;
      state.observeEngineWritten(counter, s * 1_000L);
      if (s == 5 || s == 60 || s == 300) {
        assertThat(state.engineWrittenTokensPerSecond(s * 1_000L))
            .as("after %d s", s).isCloseTo(5_000, within(250.0));
      }
    }
    // Idle: the counter stops; the rate decays over the window.
    assertThat(state.engineWrittenTokensPerSecond(300_000 + 60_000))
        .isCloseTo(5_000 / Math.E, within(100.0));
  }

  @Test
  void anOlderSnapshotIsIgnoredAndARestartStartsAgain() {
    state.observeEngineWritten(10_000_000, 0);
    state.observeEngineWritten(10_100_000, 10_000);
    double rate = state.engineWrittenTokensPerSecond(10_000);
    // A decision on another thread still holds the previous scrape: no change.
    state.observeEngineWritten(10_050_000, 10_000);
    assertThat(state.engineWrittenTokensPerSecond(10_000)).isEqualTo(rate);
    state.observeEngineWritten(10_100_000, 10_000);
    assertThat(state.engineWrittenTokensPerSecond(10_000)).isEqualTo(rate);
    // The engine restarted: its counter starts near zero, which is a new base, not a huge delta.
    state.observeEngineWritten(2_000, 11_000);
    assertThat(state.engineWrittenTokensPerSecond(11_000)).isEqualTo(-1);
    state.observeEngineWritten(12_000, 12_000);
    assertThat(state.engineWrittenTokensPerSecond(12_000)).isCloseTo(10_000, within(200.0));
  }
}
