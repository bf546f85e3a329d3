package io.affinityrouter.examples.simulator.engine;

import java.time.Instant;
import java.time.InstantSource;

/**
 * Simulated time for the real router: an {@link InstantSource} that reads the simulation's current
 * time. The run starts at {@link #START}. Not thread-safe (the simulation thread sets it; the router
 * reads it on the same thread).
 */
public final class SimClock implements InstantSource {
  /** The instant the simulated time 0 maps to. */
  public static final Instant START = Instant.parse("2026-01-01T00:00:00Z");

  private long nanos;

  /** Sets the current simulated time. */
  void set(long nowNanos) {
    this.nanos = nowNanos;
  }

  /** The current simulated time in nanoseconds since the start. */
  public long nanos() {
    return nanos;
  }

  /** The instant of a simulated time. */
  public static Instant instantAt(long nanos) {
    return START.plusNanos(nanos);
  }

  @Override
  public Instant instant() {
    return START.plusNanos(nanos);
  }

  @Override
  public long millis() {
    return START.toEpochMilli() + nanos / 1_000_000L;
  }
}
