package io.affinityrouter.core;

import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.SessionContext;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiConsumer;

/**
 * The router's calls to its {@link BindingStore}: each bounded by the store timeout, a thrown
 * exception turned into a failed future, behind the {@link StoreGuard} circuit breaker, failures
 * reported to the listeners. An answer that comes after its call timed out is not thrown away: it
 * goes to the late-answer handler, so the router learns what the store holds. Thread-safe.
 */
final class StoreClient {
  private final BindingStore store;
  private final Duration bindingTtl;
  private final long timeoutNanos;
  private final StoreGuard guard;
  private final Listeners listeners;

  StoreClient(BindingStore store, Duration bindingTtl, Duration timeout, StoreGuard guard,
      Listeners listeners) {
    this.store = store;
    this.bindingTtl = bindingTtl;
    this.timeoutNanos = timeout.toNanos();
    this.guard = guard;
    this.listeners = listeners;
  }

  /** What this decision may do with the store now. */
  StoreGuard.Admission admit() {
    return guard.admit();
  }

  /** The session's binding, claimed for {@code replicaId} if it had none; late answers to {@code late}. */
  CompletableFuture<Binding> getOrClaim(BindingKey key, String replicaId, SessionContext turn,
      BiConsumer<BindingKey, Binding> late) {
    try {
      return Bounded.within(store.getOrClaim(key, replicaId, bindingTtl, turn), timeoutNanos, late,
          key);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** A compare-and-set of the binding onto {@code replicaId}; late answers to {@code late}. */
  CompletableFuture<Binding> repin(BindingKey key, long generation, String replicaId,
      SessionContext turn, BiConsumer<BindingKey, Binding> late) {
    try {
      return Bounded.within(store.repin(key, generation, replicaId, bindingTtl, turn), timeoutNanos,
          late, key);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** The session's binding, read without claiming (none: empty). */
  CompletableFuture<Optional<Binding>> get(BindingKey key) {
    try {
      return Bounded.within(store.get(key), timeoutNanos, (k, ignored) -> { }, key);
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** A probe's claim in the background: it closes or reopens the breaker, its answer to {@code late}. */
  void probe(BindingKey key, String replicaId, SessionContext turn,
      BiConsumer<BindingKey, Binding> late) {
    CompletionStage<Binding> answer;
    try {
      answer = Bounded.within(store.getOrClaim(key, replicaId, bindingTtl, turn), timeoutNanos,
          late, key);
    } catch (RuntimeException e) {
      answer = CompletableFuture.failedFuture(e);
    }
    answer.whenComplete((b, ex) -> {
      if (ex == null) {
        guard.onSuccess(true);
        late.accept(key, b); // nobody waits for a probe: its answer is heard like a late one
      } else {
        guard.onFailure(true);
      }
    });
  }

  void succeeded() {
    guard.onSuccess(false);
  }

  void failed(Throwable ex) {
    failed(ex, false);
  }

  /** A call's answer came; {@code probe}: the call was the breaker's probe. */
  void succeeded(boolean probe) {
    guard.onSuccess(probe);
  }

  /** A call failed or timed out; {@code probe}: the call was the breaker's probe. */
  void failed(Throwable ex, boolean probe) {
    guard.onFailure(probe);
    listeners.storeFailure(ex);
  }
}
