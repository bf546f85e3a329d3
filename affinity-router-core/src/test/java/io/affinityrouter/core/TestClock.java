package io.affinityrouter.core;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicLong;

/** A settable clock for tests: starts at a fixed instant and moves only when told. */
public final class TestClock implements InstantSource {
  private final AtomicLong millis;

  public TestClock() {
    this(1_700_000_000_000L);
  }

  public TestClock(long startMillis) {
    this.millis = new AtomicLong(startMillis);
  }

  public void advance(Duration d) {
    millis.addAndGet(d.toMillis());
  }

  @Override
  public long millis() {
    return millis.get();
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(millis.get());
  }
}
