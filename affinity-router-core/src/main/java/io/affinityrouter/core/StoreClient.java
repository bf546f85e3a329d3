package io.affinityrouter.core;

import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * The router's calls to its {@link BindingStore}: each bounded by the store timeout, a thrown
 * exception turned into a failed future (no lambda per call: this is the hot path), behind the {@link StoreGuard} circuit breaker, failures
 * reported to the listeners. Thread-safe.
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

  CompletableFuture<Binding> getOrClaim(BindingKey key, String replicaId) {
    try {
      return bounded(store.getOrClaim(key, replicaId, bindingTtl));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  CompletableFuture<Binding> repin(BindingKey key, long generation, String replicaId) {
    try {
      return bounded(store.repin(key, generation, replicaId, bindingTtl));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** A probe's claim in the background: its answer only closes or reopens the breaker. */
  void probe(BindingKey key, String replicaId) {
    getOrClaim(key, replicaId).whenComplete((b, ex) -> {
      if (ex == null) {
        guard.onSuccess(true);
      } else {
        guard.onFailure(true);
      }
    });
  }

  void succeeded() {
    guard.onSuccess(false);
  }

  void failed(Throwable ex) {
    guard.onFailure(false);
    listeners.storeFailure(ex);
  }

  /** The store's answer, failing with a timeout if it is not there within the store timeout. */
  private CompletableFuture<Binding> bounded(CompletionStage<Binding> stage) {
    CompletableFuture<Binding> f = stage.toCompletableFuture();
    return f.isDone() ? f : f.copy().orTimeout(timeoutNanos, TimeUnit.NANOSECONDS);
  }
}
