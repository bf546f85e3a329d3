package io.affinityrouter.core;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;

/**
 * The deadline timer of held requests when the builder was given none: one daemon thread for every
 * router in the JVM, created on first use (as {@code CompletableFuture.delayedExecutor}'s).
 */
final class HoldScheduler {
  private HoldScheduler() {}

  private static final class Holder {
    static final ScheduledExecutorService SHARED = create();

    private static ScheduledExecutorService create() {
      ScheduledThreadPoolExecutor e = new ScheduledThreadPoolExecutor(1, r -> {
        Thread t = new Thread(r, "affinity-router-hold-deadlines");
        t.setDaemon(true);
        return t;
      });
      e.setRemoveOnCancelPolicy(true);
      return e;
    }
  }

  static ScheduledExecutorService shared() {
    return Holder.SHARED;
  }
}
