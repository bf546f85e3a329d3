package io.affinityrouter.core;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/** A store's answer bounded by a timeout, the answers that lose the race handed on, not lost. */
final class Bounded {
  private Bounded() {}

  /**
   * {@code stage}'s answer, or a {@link java.util.concurrent.TimeoutException} after
   * {@code timeoutNanos}; an answer that comes after the timeout goes to {@code late} (with
   * {@code arg}). One callback on the store's future; an answer already there costs nothing.
   */
  static <A, T> CompletableFuture<T> within(CompletionStage<T> stage, long timeoutNanos,
      BiConsumer<A, T> late, @Nullable A arg) {
    CompletableFuture<T> f = stage.toCompletableFuture();
    if (f.isDone()) {
      return f;
    }
    CompletableFuture<T> answer = new CompletableFuture<T>()
        .orTimeout(timeoutNanos, TimeUnit.NANOSECONDS);
    f.whenComplete((v, ex) -> {
      boolean onTime = ex == null ? answer.complete(v) : answer.completeExceptionally(ex);
      if (!onTime && ex == null) {
        late.accept(arg, v);
      }
    });
    return answer;
  }
}
