package io.affinityrouter.core;

import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A circuit breaker around the binding store, so that an outage costs each caller at most the store
 * timeout once, and then nothing.
 *
 * <p>Closed, every decision calls the store. A failure (an error or a timeout) opens the breaker for a
 * back-off that starts at {@code initialBackoff} and doubles with each failed probe up to
 * {@code maxBackoff}. While open, decisions skip the store and route degraded at once. When the
 * back-off has passed, exactly one decision is let through as a <em>probe</em>: the router makes its
 * store call in the background, without waiting for it, and routes that decision degraded too. The
 * probe's success closes the breaker; its failure reopens it. Thread-safe and lock-free.
 */
final class StoreGuard {
  /** What a decision may do with the store. */
  enum Admission {
    /** Call the store and wait for it (up to the timeout). */
    CALL,
    /** Call the store in the background as a probe, and route degraded without waiting. */
    PROBE,
    /** Do not call the store: route degraded. */
    SKIP
  }

  private final InstantSource clock;
  private final long initialBackoffMillis;
  private final long maxBackoffMillis;
  private final AtomicLong openUntil = new AtomicLong(-1); // -1: closed
  private final AtomicLong backoff;
  private final AtomicBoolean probing = new AtomicBoolean();

  /** Creates a closed breaker. */
  StoreGuard(InstantSource clock, long initialBackoffMillis, long maxBackoffMillis) {
    this.clock = clock;
    this.initialBackoffMillis = initialBackoffMillis;
    this.maxBackoffMillis = Math.max(initialBackoffMillis, maxBackoffMillis);
    this.backoff = new AtomicLong(initialBackoffMillis);
  }

  /** Whether the breaker is closed. */
  boolean isClosed() {
    return openUntil.get() < 0;
  }

  /** What the next decision may do. */
  Admission admit() {
    long until = openUntil.get();
    if (until < 0) {
      return Admission.CALL;
    }
    if (clock.millis() >= until && probing.compareAndSet(false, true)) {
      return Admission.PROBE;
    }
    return Admission.SKIP;
  }

  /** A store call (normal or probe) succeeded. */
  void onSuccess(boolean probe) {
    if (probe) {
      probing.set(false);
    }
    if (openUntil.get() >= 0) {
      openUntil.set(-1);
      backoff.set(initialBackoffMillis);
    }
  }

  /** A store call (normal or probe) failed or timed out. */
  void onFailure(boolean probe) {
    long now = clock.millis();
    if (probe) {
      long next = Math.min(maxBackoffMillis, backoff.get() * 2);
      backoff.set(next);
      openUntil.set(now + next);
      probing.set(false);
    } else if (openUntil.get() < 0) {
      openUntil.compareAndSet(-1, now + backoff.get());
    }
  }
}
