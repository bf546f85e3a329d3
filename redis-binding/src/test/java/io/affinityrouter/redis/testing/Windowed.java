package io.affinityrouter.redis.testing;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.IntFunction;

/** Runs many asynchronous calls with a bounded number in flight, collecting results by index. */
public final class Windowed {
  private Windowed() {}

  /** Calls {@code call(i)} for i in 0..n-1, at most {@code window} in flight; waits for all. */
  public static <T> AtomicReferenceArray<T> run(int n, int window, IntFunction<CompletionStage<T>> call)
      throws InterruptedException {
    AtomicReferenceArray<T> results = new AtomicReferenceArray<>(n);
    Semaphore permits = new Semaphore(window);
    CompletableFuture<?>[] all = new CompletableFuture<?>[n];
    for (int i = 0; i < n; i++) {
      permits.acquire();
      int index = i;
      all[i] = call.apply(i).toCompletableFuture().whenComplete((v, e) -> {
        permits.release();
        if (e == null) {
          results.set(index, v);
        }
      });
    }
    try {
      CompletableFuture.allOf(all).get(120, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("calls failed: " + e.getCause(), e);
    }
    return results;
  }
}
