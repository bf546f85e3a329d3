package io.affinityrouter.core;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.affinityrouter.RepinCause;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.CompletableFuture;

/**
 * The pin stage of {@code select}: the session pinning protocol, run once the candidate is
 * admitted.
 *
 * <ol>
 *   <li><b>Claim</b>: one {@code getOrClaim(key, candidate)}. A new session is bound to the
 *       candidate; racing gateways all get the one binding that won. The call slides the TTL.
 *   <li><b>Keep</b>: an existing binding's replica keeps the session while {@link RepinPolicy}
 *       says so.
 *   <li><b>Repin</b>: otherwise {@code repin(key, generation, candidate)}, a compare-and-set on the
 *       generation. If another gateway moved the session first, this router adopts the newer
 *       binding, or repins again from it (at most three times), so a stale gateway never
 *       overwrites a newer binding.
 *   <li><b>Degraded</b>: when the store fails, times out, or its circuit breaker is open, the
 *       session keeps the replica the store last confirmed to this router if it is still usable,
 *       else rendezvous hashing of the session over the healthy replicas, which every gateway
 *       computes alike. Once the store answers again, the binding is repinned where the degraded
 *       decisions went ({@link RepinCause#RECONCILED}) if it differs.
 * </ol>
 *
 * The answer may arrive on the store's I/O thread, where the decision then completes. Nothing here
 * throws to the caller for a store outcome. Thread-safe.
 */
final class Pinning {
  private static final int MAX_REPIN_ATTEMPTS = 3;

  private final StoreClient store;
  private final RepinPolicy policy;
  private final Limits limits;
  private final BlockHasher hasher;
  private final Decide decide;
  private final Listeners listeners;
  /** The binding the store last confirmed per session: where a degraded decision goes. */
  private final Cache<BindingKey, String> lastKnown;
  /** Where degraded decisions sent a session: reconciled when the store answers again. */
  private final Cache<BindingKey, String> degradedSessions;
  private final Step afterClaim = this::afterClaim; // built once: the common path allocates no step

  Pinning(StoreClient store, RepinPolicy policy, Limits limits, BlockHasher hasher, Decide decide,
      Listeners listeners, long rememberedSessions, Duration bindingTtl, InstantSource clock) {
    this.store = store;
    this.policy = policy;
    this.limits = limits;
    this.hasher = hasher;
    this.decide = decide;
    this.listeners = listeners;
    this.lastKnown = Caffeine.newBuilder().maximumSize(rememberedSessions)
        .expireAfterAccess(bindingTtl).ticker(() -> clock.millis() * 1_000_000L)
        .executor(Runnable::run).build();
    this.degradedSessions = Caffeine.newBuilder().maximumSize(rememberedSessions)
        .expireAfterWrite(bindingTtl).ticker(() -> clock.millis() * 1_000_000L)
        .executor(Runnable::run).build();
  }

  /** A degraded session's replica to return to, admitted, or -1. */
  int reconcileTarget(Selection sel) {
    if (degradedSessions.estimatedSize() == 0) {
      return -1;
    }
    String target = degradedSessions.getIfPresent(sel.key);
    if (target == null) {
      return -1;
    }
    int i = sel.indexOf(target);
    return i >= 0 && sel.usable(i) && limits.admit(sel, i) ? i : -1;
  }

  Outcome run(Selection sel) {
    StoreGuard.Admission admission = store.admit();
    if (admission == StoreGuard.Admission.SKIP) {
      return sel.decided(degraded(sel));
    }
    if (admission == StoreGuard.Admission.PROBE) {
      RoutingDecision d = degraded(sel);
      store.probe(sel.key, d.replica().id());
      return sel.decided(d);
    }
    return continueWith(sel, store.getOrClaim(sel.key, sel.states[sel.candidate].id()),
        afterClaim);
  }

  private Outcome afterClaim(Selection sel, Binding b, Throwable ex) {
    if (ex != null) {
      store.failed(ex);
      return sel.decided(degraded(sel));
    }
    store.succeeded();
    String reconcile = degradedSessions.estimatedSize() == 0
        ? null : degradedSessions.asMap().remove(sel.key);
    if (reconcile != null && !reconcile.equals(b.replicaId())
        && reconcile.equals(sel.states[sel.candidate].id())) {
      return repin(sel, b, RepinCause.RECONCILED, 0);
    }
    return afterBinding(sel, b, 0);
  }

  private Outcome afterBinding(Selection sel, Binding b, int attempt) {
    int c = sel.candidate;
    // The index knows only what this router sent: when it did not send the session's last turn to
    // its replica, a share of the prompt is assumed cached there.
    boolean assume = !b.written() && !b.replicaId().equals(lastKnown.getIfPresent(sel.key));
    if (b.replicaId().equals(sel.states[c].id())) {
      RoutingReason reason = attempt > 0 ? RoutingReason.SESSION_ADOPTED
          : b.written() ? RoutingReason.SESSION_CLAIMED : RoutingReason.SESSION_AFFINITY;
      remember(sel.key, b.replicaId());
      return sel.decided(decide.session(sel, c, reason, b.generation(), !b.written(), assume));
    }
    int bound = sel.indexOf(b.replicaId());
    RepinCause cause = policy.keep(sel, bound, assume);
    if (cause == null) {
      sel.states[c].cancelAcquire(sel.requestTokens);
      RoutingReason reason = attempt > 0 ? RoutingReason.SESSION_ADOPTED
          : RoutingReason.SESSION_AFFINITY;
      remember(sel.key, b.replicaId());
      return sel.decided(decide.session(sel, bound, reason, b.generation(), true, assume));
    }
    return repin(sel, b, cause, attempt);
  }

  private Outcome repin(Selection sel, Binding old, RepinCause cause, int attempt) {
    int c = sel.candidate;
    String target = sel.states[c].id();
    if (attempt >= MAX_REPIN_ATTEMPTS) {
      return sel.decided(decide.degraded(sel, c));
    }
    return continueWith(sel, store.repin(sel.key, old.generation(), target), (s, nb, ex) -> {
      if (ex != null) {
        store.failed(ex);
        degradedSessions.put(s.key, target);
        return s.decided(decide.degraded(s, c));
      }
      store.succeeded();
      if (nb.written()) {
        remember(s.key, target);
        listeners.repin(s.key, old.replicaId(), target, cause);
        return s.decided(decide.repinned(s, c, nb.generation(), cause, old.replicaId()));
      }
      return afterBinding(s, nb, attempt + 1);
    });
  }

  /** Remembers the binding the store confirmed (no write when it is unchanged). */
  private void remember(BindingKey key, String replicaId) {
    if (!replicaId.equals(lastKnown.getIfPresent(key))) {
      lastKnown.put(key, replicaId);
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
    String known = lastKnown.getIfPresent(key);
    if (known != null) {
      int k = sel.indexOf(known);
      if (k >= 0 && sel.usable(k) && (k == c || limits.admit(sel, k))) {
        chosen = k;
      }
    }
    long keyHash = Rendezvous.keyHash(key.sessionId()) ^ hasher.chainSeed(key.model(),
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
      } else if (best == c || limits.admit(sel, best)) {
        chosen = best;
      } else {
        tried[best] = true;
      }
    }
    if (chosen != c) {
      sel.states[c].cancelAcquire(sel.requestTokens);
    }
    degradedSessions.put(key, sel.states[chosen].id());
    return decide.degraded(sel, chosen);
  }

  private interface Step {
    Outcome apply(Selection sel, Binding b, Throwable ex);
  }

  /** Runs {@code step} now if the store already answered, else when it does (detaching state). */
  private static Outcome continueWith(Selection sel, CompletableFuture<Binding> f, Step step) {
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
    return new Outcome.Pending(f.handle((b, ex) -> step.apply(own, b, ex))
        .thenCompose(Outcome::stage));
  }
}
