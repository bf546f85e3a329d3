package io.affinityrouter.core;

import java.time.Instant;
import java.time.InstantSource;

/**
 * A clock the benchmark moves: the router's time (binding expiry, lease timing) is injected, so a
 * benchmark can expire session bindings between operations without sleeping. Single writer; reads
 * from other threads see a recent value.
 */
final class SettableClock implements InstantSource {
  private volatile long millis;

  SettableClock(long startMillis) {
    this.millis = startMillis;
  }

  /** Moves the clock forward. Call from one thread only. */
  void advance(long deltaMillis) {
    millis = millis + deltaMillis;
  }

  @Override
  public long millis() {
    return millis;
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(millis);
  }
}
