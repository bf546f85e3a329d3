package io.affinityrouter.core;

import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A circuit breaker around the binding store, so that an outage costs each caller at most the store
 * timeout a few times, and then nothing, while a store that is merely slow now and then stays in
 * use.
 *
 * <p>Closed, every decision calls the store. The breaker opens when {@value #WINDOW_FAILURES} of
 * the last {@value #WINDOW} answers failed (errors or timeouts), never on one: a late answer now
 * and then, or a burst of timeouts when the gateway's threads were starved, leaves it closed, and
 * a late answer counts as a success (the store is up), closing it again if it had opened. Open, it stays so for a back-off that starts at
 * {@code initialBackoff} and doubles with each failed probe up to {@code maxBackoff}; decisions
 * skip the store and route degraded at once. When the back-off has passed, exactly one decision is
 * let through as a <em>probe</em>: the router makes its store call in the background, without
 * waiting for it, and routes that decision degraded too. The probe's success closes the breaker;
 * its failure reopens it. Thread-safe and lock-free; a healthy store's answers cost one volatile
 * read here.
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

  /** Answers in the failure-rate window: {@value}. */
  static final int WINDOW = 32;
  /** Failures in the window that open the breaker: {@value} (half). */
  static final int WINDOW_FAILURES = 16;
  private static final long WINDOW_MASK = (1L << WINDOW) - 1;

  private final InstantSource clock;
  private final long initialBackoffMillis;
  private final long maxBackoffMillis;
  private final AtomicLong openUntil = new AtomicLong(-1); // -1: closed
  private final AtomicLong backoff;
  private final AtomicBoolean probing = new AtomicBoolean();
  /** The last {@value #WINDOW} answers, newest in bit 0, a failure a 1 (all 0: nothing to track). */
  private final AtomicLong window = new AtomicLong();

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
    if (window.get() != 0) { // a success shifts the window only while it holds a failure
      window.getAndUpdate(w -> (w << 1) & WINDOW_MASK);
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
      return;
    }
    long w = window.updateAndGet(x -> ((x << 1) | 1) & WINDOW_MASK);
    if (Long.bitCount(w) >= WINDOW_FAILURES && openUntil.compareAndSet(-1, now + backoff.get())) {
      window.set(0);
    }
  }
}
