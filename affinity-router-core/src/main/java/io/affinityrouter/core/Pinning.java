package io.affinityrouter.core;

import io.affinityrouter.RepinCause;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.RoutingListener;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The session pinning protocol, run after the router has scored the replicas and admitted its
 * candidate:
 *
 * <ol>
 *   <li><b>Claim</b> — one {@code getOrClaim(key, candidate)}: a new session is bound to the
 *       candidate; racing gateways all get the one binding that won. The call also slides the TTL.
 *   <li><b>Keep</b> — an existing binding's replica keeps the session while it is in the list,
 *       healthy (or draining), serves the model awake, is under its limits, and its estimated TTFT with
 *       the session's cache is within the affinity budget or within the overload threshold of the
 *       candidate's.
 *   <li><b>Repin</b> — otherwise {@code repin(key, generation, candidate)}: a compare-and-set on the
 *       generation. If another gateway moved the session first, this router adopts the newer binding
 *       (or, if that replica is no good either, repins again from the newer generation, at most three
 *       times). A stale gateway therefore never overwrites a newer binding.
 *   <li><b>Degraded</b> — when the store fails, times out, or its circuit breaker is open: the
 *       session keeps the replica the store last confirmed to this router, if it is still usable
 *       (every gateway that saw the session knows the same binding); otherwise rendezvous hashing of
 *       the session over the healthy replicas, which every gateway computes alike. Where it went is
 *       remembered, and once the store answers again the binding is repinned there
 *       ({@link RepinCause#RECONCILED}) if it differs.
 * </ol>
 *
 * Every store call is bounded by the router's store timeout; the answer may arrive on the store's
 * I/O thread, where the decision then completes. Results are values: nothing here throws to the
 * caller for a store outcome.
 */
final class Pinning {
  private static final int MAX_REPIN_ATTEMPTS = 3;

  private final DefaultRouter r;
  private final Step afterClaim = this::afterClaim; // built once: the common path allocates no step

  Pinning(DefaultRouter router) {
    this.r = router;
  }

  /** Returns a finished decision, or a stage when the store has not answered yet. */
  Object run(Selection sel) {
    StoreGuard.Admission admission = r.guard.admit();
    if (admission == StoreGuard.Admission.SKIP) {
      return degraded(sel);
    }
    if (admission == StoreGuard.Admission.PROBE) {
      RoutingDecision d = degraded(sel);
      String target = d.replica().id();
      call(() -> r.store.getOrClaim(sel.key, target, r.bindingTtl)).whenComplete((b, ex) -> {
        if (ex == null) {
          r.guard.onSuccess(true);
        } else {
          r.guard.onFailure(true);
        }
      });
      return d;
    }
    CompletableFuture<Binding> f;
    try {
      f = bounded(r.store.getOrClaim(sel.key, sel.states[sel.candidate].id(), r.bindingTtl));
    } catch (RuntimeException e) {
      f = CompletableFuture.failedFuture(e);
    }
    return continueWith(sel, f, afterClaim);
  }

  private Object afterClaim(Selection sel, Binding b, Throwable ex) {
    if (ex != null) {
      storeFailed(ex);
      return degraded(sel);
    }
    r.guard.onSuccess(false);
    String reconcile = r.degradedSessions.estimatedSize() == 0
        ? null : r.degradedSessions.asMap().remove(sel.key);
    if (reconcile != null && !reconcile.equals(b.replicaId())
        && reconcile.equals(sel.states[sel.candidate].id())) {
      return repin(sel, b, RepinCause.RECONCILED, 0);
    }
    return afterBinding(sel, b, 0);
  }

  private Object afterBinding(Selection sel, Binding b, int attempt) {
    int c = sel.candidate;
    // The prefix index knows what this router sent; when this router did not send the session's
    // last turn to its replica, the index may miss the session's context there, so a share of the
    // prompt is assumed cached (affinityCachedFraction).
    boolean assume = !b.written() && !b.replicaId().equals(r.lastKnown.getIfPresent(sel.key));
    if (b.replicaId().equals(sel.states[c].id())) {
      RoutingReason reason = attempt > 0 ? RoutingReason.SESSION_ADOPTED
          : b.written() ? RoutingReason.SESSION_CLAIMED : RoutingReason.SESSION_AFFINITY;
      remember(sel.key, b.replicaId());
      return r.routed(sel, c, reason, b.generation(), false, null, null, !b.written(), assume);
    }
    int bound = sel.indexOf(b.replicaId());
    RepinCause cause = keep(sel, bound, assume);
    if (cause == null) {
      sel.states[c].cancelAcquire(sel.requestTokens);
      RoutingReason reason = attempt > 0 ? RoutingReason.SESSION_ADOPTED
          : RoutingReason.SESSION_AFFINITY;
      remember(sel.key, b.replicaId());
      return r.routed(sel, bound, reason, b.generation(), false, null, null, true, assume);
    }
    return repin(sel, b, cause, attempt);
  }

  /** Null if the bound replica keeps the session (and admitted it), else why it cannot. */
  private RepinCause keep(Selection sel, int bound, boolean assume) {
    if (bound < 0) {
      return RepinCause.REPLICA_GONE;
    }
    switch (sel.status[bound]) {
      case Selection.UNHEALTHY:
        return RepinCause.REPLICA_UNHEALTHY;
      case Selection.NO_MODEL:
      case Selection.ASLEEP:
      case Selection.LOADING:
        return RepinCause.MODEL_UNAVAILABLE;
      case Selection.AT_LIMIT:
        return RepinCause.REPLICA_AT_LIMIT;
      default:
        break;
    }
    long cached = assume ? Math.max(sel.cachedTokens(bound),
        (long) (r.affinityCachedFraction * sel.promptTokens)) : sel.cachedTokens(bound);
    double boundPrefillSeconds =
        r.costModel.prefillSeconds(sel.promptTokens - cached, cached, sel.slowdown[bound]);
    double boundPrefill = r.recomputeWeight * boundPrefillSeconds;
    double boundCost = sel.queue[bound] - sel.plugin[bound] + boundPrefill;
    int c = sel.candidate;
    double candidateCost = sel.cost[c];
    // What the session's cache is worth here: the prefill it saves against the candidate.
    double saved = Math.max(0, r.recomputeWeight * sel.prefill[c] - boundPrefill);
    // Within the affinity budget the session stays, whatever its cache saves.
    double boundTtft = sel.queue[bound] + boundPrefillSeconds;
    double budget = r.budgetSeconds();
    boolean withinBudget = budget > 0 && boundTtft <= budget;
    if (!withinBudget
        && boundCost > candidateCost + r.repinSlackSeconds + r.repinSavingsMultiple * saved) {
      return RepinCause.REPLICA_OVERLOADED;
    }
    return r.admit(sel, bound) ? null : RepinCause.REPLICA_AT_LIMIT;
  }

  private Object repin(Selection sel, Binding old, RepinCause cause, int attempt) {
    int c = sel.candidate;
    String target = sel.states[c].id();
    if (attempt >= MAX_REPIN_ATTEMPTS) {
      return r.routed(sel, c, RoutingReason.DEGRADED_FALLBACK, 0, true, null, null, false, false);
    }
    CompletableFuture<Binding> f = call(
        () -> r.store.repin(sel.key, old.generation(), target, r.bindingTtl));
    return continueWith(sel, f, (s, nb, ex) -> {
      if (ex != null) {
        storeFailed(ex);
        r.degradedSessions.put(s.key, target);
        return r.routed(s, c, RoutingReason.DEGRADED_FALLBACK, 0, true, null, null, false, false);
      }
      r.guard.onSuccess(false);
      if (nb.written()) {
        remember(s.key, target);
        notifyRepin(s.key, old.replicaId(), target, cause);
        return r.routed(s, c, RoutingReason.SESSION_REPINNED, nb.generation(), false, cause,
            old.replicaId(), false, false);
      }
      return afterBinding(s, nb, attempt + 1);
    });
  }

  /** Remembers the binding the store confirmed (no write when it is unchanged). */
  private void remember(BindingKey key, String replicaId) {
    if (!replicaId.equals(r.lastKnown.getIfPresent(key))) {
      r.lastKnown.put(key, replicaId);
    }
  }

  /**
   * The session's last confirmed replica if still usable, else rendezvous over the healthy replicas;
   * remembers where the session went for reconciliation.
   */
  private RoutingDecision degraded(Selection sel) {
    BindingKey key = sel.key;
    int c = sel.candidate;
    int chosen = -1;
    String known = r.lastKnown.getIfPresent(key);
    if (known != null) {
      int k = sel.indexOf(known);
      if (k >= 0 && sel.usable(k) && (k == c || r.admit(sel, k))) {
        chosen = k;
      }
    }
    long keyHash = Rendezvous.keyHash(key.sessionId()) ^ r.hasher.chainSeed(key.model(),
        key.tenant());
    boolean[] tried = chosen >= 0 ? null : new boolean[sel.size];
    while (chosen < 0) {
      int best = -1;
      long top = 0;
      for (int i = 0; i < sel.size; i++) {
        if (!tried[i] && (sel.status[i] == Selection.OK || i == c)) {
          long score = Rendezvous.score(keyHash, sel.states[i].idHash());
          if (best < 0 || score > top) {
            best = i;
            top = score;
          }
        }
      }
      if (best < 0) {
        chosen = c;
      } else if (best == c || r.admit(sel, best)) {
        chosen = best;
      } else {
        tried[best] = true;
      }
    }
    if (chosen != c) {
      sel.states[c].cancelAcquire(sel.requestTokens);
    }
    r.degradedSessions.put(key, sel.states[chosen].id());
    return r.routed(sel, chosen, RoutingReason.DEGRADED_FALLBACK, 0, true, null, null, false, false);
  }

  /** Calls the store, turning a thrown exception into a failed future, bounded by the timeout. */
  private CompletableFuture<Binding> call(Supplier<CompletionStage<Binding>> op) {
    try {
      return bounded(op.get());
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** The store's answer, failing with a timeout if it is not there within the store timeout. */
  private CompletableFuture<Binding> bounded(CompletionStage<Binding> stage) {
    CompletableFuture<Binding> f = stage.toCompletableFuture();
    return f.isDone() ? f : f.copy().orTimeout(r.storeTimeoutNanos, TimeUnit.NANOSECONDS);
  }

  private interface Step {
    Object apply(Selection sel, Binding b, Throwable ex);
  }

  /** Runs {@code step} now if the store already answered, else when it does (detaching state). */
  private static Object continueWith(Selection sel, CompletableFuture<Binding> f, Step step) {
    if (f.isDone()) {
      Binding b = null;
      Throwable ex = null;
      try {
        b = f.join();
      } catch (RuntimeException e) {
        ex = e.getCause() != null ? e.getCause() : e;
      }
      return step.apply(sel, b, ex);
    }
    Selection own = sel.detached();
    return f.handle((b, ex) -> step.apply(own, b, ex)).thenCompose(Pinning::stage);
  }

  @SuppressWarnings("unchecked")
  static CompletionStage<RoutingDecision> stage(Object outcome) {
    return outcome instanceof RoutingDecision
        ? CompletableFuture.completedFuture((RoutingDecision) outcome)
        : (CompletionStage<RoutingDecision>) outcome;
  }

  private void storeFailed(Throwable ex) {
    r.guard.onFailure(false);
    for (RoutingListener l : r.listeners) {
      try {
        l.onStoreFailure(ex);
      } catch (RuntimeException ignored) {
        // Listeners must not break routing.
      }
    }
  }

  private void notifyRepin(BindingKey key, String from, String to, RepinCause cause) {
    for (RoutingListener l : r.listeners) {
      try {
        l.onRepin(key, from, to, cause);
      } catch (RuntimeException ignored) {
        // Listeners must not break routing.
      }
    }
  }
}
