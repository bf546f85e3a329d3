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
 * goes to the late-answer handler, so the router learns what the store holds.
 *
 * <p>A claim for a session this router has never heard of waits longer: if another router holds
 * its binding, answering without it guesses a replica, and a wrong guess recomputes the session's
 * whole context there and splits it across two replicas, while waiting costs only the store's
 * answer time. So that wait is at least {@link #FIRST_CONTACT_FLOOR_MILLIS} and grows by the
 * prompt's prefill time on a cold replica, up to {@link #FIRST_CONTACT_MAX_MILLIS}. Thread-safe.
 */
final class StoreClient {
  /** The least wait for a session this router has never heard of: {@value} ms. */
  static final long FIRST_CONTACT_FLOOR_MILLIS = 250;
  /**
   * The longest wait for a session this router has never heard of: {@value} ms (a store's own
   * command timeout must sit above it, or a slow answer fails where it would have come).
   */
  static final long FIRST_CONTACT_MAX_MILLIS = 2_000;

  private final BindingStore store;
  private final Duration bindingTtl;
  private final long timeoutNanos;
  private final StoreGuard guard;
  private final Listeners listeners;
  private final CostModel costModel;

  StoreClient(BindingStore store, Duration bindingTtl, Duration timeout, StoreGuard guard,
      Listeners listeners, CostModel costModel) {
    this.store = store;
    this.bindingTtl = bindingTtl;
    this.timeoutNanos = timeout.toNanos();
    this.guard = guard;
    this.listeners = listeners;
    this.costModel = costModel;
  }

  /** The store timeout, in nanoseconds. */
  long timeoutNanos() {
    return timeoutNanos;
  }

  /** The wait for a claim of a session this router has never heard of, in nanoseconds. */
  long firstContactNanos(int promptTokens) {
    double wrongGuess = costModel.prefillSeconds(promptTokens, 0, 1.0);
    long floor = Math.max(timeoutNanos, FIRST_CONTACT_FLOOR_MILLIS * 1_000_000L);
    return Math.min(Math.max(timeoutNanos, FIRST_CONTACT_MAX_MILLIS * 1_000_000L),
        floor + (long) Math.min(wrongGuess * 1e9, Long.MAX_VALUE / 2.0));
  }

  /** What this decision may do with the store now. */
  StoreGuard.Admission admit() {
    return guard.admit();
  }

  /** The session's binding, claimed for {@code replicaId} if it had none; late answers to {@code late}. */
  CompletableFuture<Binding> getOrClaim(BindingKey key, String replicaId, SessionContext turn,
      BiConsumer<BindingKey, Binding> late) {
    return getOrClaim(key, replicaId, turn, late, timeoutNanos);
  }

  /** As {@link #getOrClaim(BindingKey, String, SessionContext, BiConsumer)}, waiting {@code nanos}. */
  CompletableFuture<Binding> getOrClaim(BindingKey key, String replicaId, SessionContext turn,
      BiConsumer<BindingKey, Binding> late, long nanos) {
    try {
      return Bounded.within(store.getOrClaim(key, replicaId, bindingTtl, turn), nanos, late,
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
