package io.affinityrouter.core.kvevents;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/** Waits for what another thread (a subscriber, a publisher) does, with a busy machine's patience. */
final class Await {
  /** How long a socket round trip may take on a loaded machine. */
  static final Duration PATIENCE = Duration.ofSeconds(20);

  private Await() {}

  /** Spins until {@code condition} holds, or fails after {@link #PATIENCE} naming {@code what}. */
  static void until(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out waiting for " + what);
      }
      Thread.onSpinWait();
      Thread.yield();
    }
  }
}
