package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.affinityrouter.ReplicaLoad;
import org.junit.jupiter.api.Test;

/**
 * The engine write-counter rate, the KV held and the session turns, as {@link ReplicaState} keeps
 * them.
 */
class ReplicaStateTest {
  private final ReplicaState state = new ReplicaState("r", 0, 30);

  @Test
  void sessionTurnsAreCountedOverTheReturnInterval() {
    assertThat(state.turnsPerSecond(0, 5)).isZero();
    for (int i = 0; i < 50; i++) {
      state.countTurn(0, 5);
    }
    assertThat(state.turnsPerSecond(0, 5)).isCloseTo(10, within(1e-9)); // 50 turns in 5 s
    assertThat(state.turnsPerSecond(5_000, 5)).isCloseTo(10 / Math.E, within(1e-9));
    // a session that returns every interval keeps about one turn in the count
    ReplicaState steady = new ReplicaState("s", 1, 30);
    for (long t = 0; t <= 600_000; t += 5_000) {
      steady.countTurn(t, 5);
    }
    assertThat(steady.turnsPerSecond(600_000, 5) * 5)
        .isCloseTo(1 / (1 - Math.exp(-1)), within(1e-6));
  }

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

  @Test
  void otherGatewaysRequestsOnTheEngineCountAsHeldKvTheSizeOfThisRoutersOwn() {
    state.tryAcquire(100, Long.MAX_VALUE, 10_000);
    state.tryAcquire(100, Long.MAX_VALUE, 10_000);
    ReplicaLoad alone = ReplicaLoad.builder().kvCapacityTokens(100_000).runningRequests(1)
        .waitingRequests(1).kvUsage(0.9).build();
    // The engine's usage is what is held now; the lifetime counts what the requests will hold.
    assertThat(state.heldTokens(alone)).isEqualTo(20_000);
    assertThat(state.cacheLifetimeSeconds(alone, 1_000)).isCloseTo(80, within(1e-9));
    // Six in the engine, two of them this router's: the other four are taken as 10,000 tokens each.
    ReplicaLoad shared = alone.toBuilder().runningRequests(4).waitingRequests(2).build();
    assertThat(state.heldTokens(shared)).isEqualTo(60_000);
    assertThat(state.cacheLifetimeSeconds(shared, 1_000)).isCloseTo(40, within(1e-9));
    // Fewer in the engine than this router has in flight (a scrape behind): its own count.
    assertThat(state.heldTokens(alone.toBuilder().waitingRequests(0).build())).isEqualTo(20_000);
    assertThat(state.cacheLifetimeSeconds(ReplicaLoad.UNKNOWN, 1_000)).isNaN();
    assertThat(state.cacheLifetimeSeconds(shared, 0)).isInfinite();
  }

  @Test
  void requestsSentAfterTheSnapshotAddToTheOthersItCounted() {
    state.tryAcquire(100, Long.MAX_VALUE, 10_000);
    state.tryAcquire(100, Long.MAX_VALUE, 10_000);
    ReplicaLoad scraped = ReplicaLoad.builder().kvCapacityTokens(200_000).runningRequests(6)
        .build();
    state.observeLoad(scraped); // six in the engine, two of them this router's
    assertThat(state.heldTokens(scraped)).isEqualTo(60_000);
    // two more sent before the next scrape: the other gateways' four are still there
    state.tryAcquire(100, Long.MAX_VALUE, 10_000);
    state.tryAcquire(100, Long.MAX_VALUE, 10_000);
    assertThat(state.heldTokens(scraped)).isEqualTo(80_000);
    // three of this router's finish: the others' four stay, at its remaining request's size
    state.release(10_000, 0, 0);
    state.release(10_000, 0, 0);
    state.release(10_000, 0, 0);
    assertThat(state.heldTokens(scraped)).isEqualTo(50_000);
    // the next scrape counts what is there then
    ReplicaLoad next = scraped.toBuilder().runningRequests(3).build();
    state.observeLoad(next);
    assertThat(state.heldTokens(next)).isEqualTo(30_000);
  }
}
