package io.affinityrouter.core;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.affinityrouter.RepinCause;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.SessionContext;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * The pin stage of {@code select}: the session pinning protocol, run once the candidate is
 * admitted.
 *
 * <ol>
 *   <li><b>Claim</b>: one {@code getOrClaim(key, candidate)}. A new session is bound to the
 *       candidate; racing gateways all get the one binding that won. The call slides the TTL.
 *   <li><b>Keep</b>: an existing binding's replica keeps the session while {@link RepinPolicy}
 *       says so. The claim also writes this turn's {@link io.affinityrouter.spi.SessionContext};
 *       when another router routed the last one, its context credits the bound replica with what
 *       that turn left cached there.
 *   <li><b>Repin</b>: otherwise {@code repin(key, generation, candidate)}, a compare-and-set on the
 *       generation. If another gateway moved the session first, this router adopts the newer
 *       binding, or repins again from it (at most three times), so a stale gateway never
 *       overwrites a newer binding.
 *   <li><b>Degraded</b>: without the store's answer, the decision goes where this router believes
 *       the store points: the last binding it heard of (late answers included) while that replica
 *       is usable; for a session it never heard of whose claim is in flight (the call timed out),
 *       the claimed candidate, where the claim will land; only when the store is unreachable
 *       (an error, or the breaker open) rendezvous hashing over the healthy replicas, which every
 *       gateway computes alike.
 *   <li><b>Reconciled</b>: once the store answers again, a session that degraded decisions sent
 *       elsewhere is repinned there ({@link RepinCause#RECONCILED}), fenced: only if the store's
 *       binding is no newer than the one this router knew when it degraded. The store's binding
 *       wins over a router's own outage.
 * </ol>
 *
 * The answer may arrive on the store's I/O thread, where the decision then completes. Nothing here
 * throws to the caller for a store outcome. Thread-safe.
 */
final class Pinning {
  private static final int MAX_REPIN_ATTEMPTS = 3;

  /**
   * A binding the store confirmed to this router, and when this router last routed the session.
   * Compared by identity: a change replaces the instance read from the cache.
   */
  private static final class Known {
    final String replicaId;
    final long generation;
    volatile long routedMillis;
    // The last prompt routed: its full blocks, and its hashes at MARKS of them (chained: a match
    // at a mark is a match of all before it). Written in place; a torn read only blurs a sample.
    volatile int lastBlocks;
    final long @Nullable [] marks; // null: not holding, so never read

    Known(String replicaId, long generation, long routedMillis, boolean marked) {
      this.replicaId = replicaId;
      this.generation = generation;
      this.routedMillis = routedMillis;
      this.marks = marked ? new long[MARKS.length] : null;
    }

    String replicaId() {
      return replicaId;
    }

    long generation() {
      return generation;
    }
  }

  // Sessions' return intervals: only a router that holds new work reads them.
  private static final double RETURN_QUANTILE = 0.5;
  private static final double REUSE_QUANTILE = 0.5;
  // Where a prompt is marked, as shares of its blocks: how much of it the next prompt keeps.
  private static final double[] MARKS = {0.5, 0.75, 0.875, 1};

  /** Where degraded decisions sent a session, and the generation this router knew then. */
  private record Degraded(String replicaId, long knownGeneration) {}

  private final StoreClient store;
  private final long writer;
  private final Score score;
  private final RepinPolicy policy;
  private final Limits limits;
  private final BlockHasher hasher;
  private final Decide decide;
  private final Listeners listeners;
  private final boolean holding;
  private final Cache<BindingKey, Known> lastKnown;
  private final Cache<BindingKey, Degraded> degradedSessions;
  private final InstantSource clock;
  private final DecayingQuantile returns;
  private final @Nullable DecayingQuantile reuse; // shares, not seconds; null: not holding
  // Built once: the common path allocates no step and no handler.
  private final Step<Binding> afterClaim = this::afterClaim;
  private final BiConsumer<BindingKey, Binding> late = this::heard;

  Pinning(StoreClient store, long writer, Score score, RepinPolicy policy, Limits limits,
      BlockHasher hasher, Decide decide, Listeners listeners, long rememberedSessions,
      Duration bindingTtl, InstantSource clock, boolean holding) {
    this(store, writer, score, policy, limits, hasher, decide, listeners, rememberedSessions,
        bindingTtl, clock, holding, returnIntervals());
  }

  Pinning(StoreClient store, long writer, Score score, RepinPolicy policy, Limits limits,
      BlockHasher hasher, Decide decide, Listeners listeners, long rememberedSessions,
      Duration bindingTtl, InstantSource clock, boolean holding, DecayingQuantile returns) {
    this.store = store;
    this.writer = writer;
    this.score = score;
    this.policy = policy;
    this.limits = limits;
    this.hasher = hasher;
    this.decide = decide;
    this.listeners = listeners;
    this.holding = holding;
    this.clock = clock;
    this.returns = returns;
    this.reuse = holding ? new DecayingQuantile(REUSE_QUANTILE, AffinityBudget.HALF_LIFE,
        AffinityBudget.WARM_UP) : null;
    this.lastKnown = Caffeine.newBuilder().maximumSize(rememberedSessions)
        .expireAfterAccess(bindingTtl).ticker(() -> clock.millis() * 1_000_000L)
        .executor(Runnable::run).build();
    this.degradedSessions = Caffeine.newBuilder().maximumSize(rememberedSessions)
        .expireAfterWrite(bindingTtl).ticker(() -> clock.millis() * 1_000_000L)
        .executor(Runnable::run).build();
  }

  /** An estimator of the median time sessions take to come back, for {@link #returnSeconds}. */
  static DecayingQuantile returnIntervals() {
    return new DecayingQuantile(RETURN_QUANTILE, AffinityBudget.HALF_LIFE, AffinityBudget.WARM_UP);
  }

  /** Whether this router has routed the session (within its remembered sessions). */
  boolean knows(BindingKey key) {
    return lastKnown.getIfPresent(key) != null;
  }

  /** A degraded session's replica to return to, admitted, or -1. */
  int reconcileTarget(Selection sel) {
    if (degradedSessions.estimatedSize() == 0) {
      return -1;
    }
    Degraded d = degradedSessions.getIfPresent(sel.sessionKey());
    if (d == null) {
      return -1;
    }
    int i = sel.indexOf(d.replicaId());
    return i >= 0 && sel.usable(i) && limits.admit(sel, i) ? i : -1;
  }

  Outcome run(Selection sel) {
    StoreGuard.Admission admission = store.admit();
    if (admission == StoreGuard.Admission.SKIP) {
      return sel.decided(degraded(sel, false));
    }
    if (admission == StoreGuard.Admission.PROBE) {
      RoutingDecision d = degraded(sel, false);
      store.probe(sel.sessionKey(), d.replica().id(), sel.turn(writer), late);
      return sel.decided(d);
    }
    BindingKey key = sel.sessionKey();
    long wait = lastKnown.getIfPresent(key) != null ? store.timeoutNanos()
        : store.firstContactNanos(sel.promptTokens); // a guess would recompute its context
    return continueWith(sel, store.getOrClaim(key, sel.states[sel.candidate].id(),
        sel.turn(writer), late, wait), afterClaim);
  }

  /**
   * The fleet is saturated and this router has not routed the session: a session another router
   * bound is a returning turn and goes on as {@link #run} does; a new one is held, unbound (and so
   * is one the store cannot tell about now).
   */
  Outcome runUnlessNew(Selection sel) {
    if (store.admit() != StoreGuard.Admission.CALL) {
      return DefaultRouter.held(sel);
    }
    Step<Optional<Binding>> step = (s, binding, ex) -> {
      if (ex != null) {
        store.failed(ex);
        return DefaultRouter.held(s);
      }
      store.succeeded();
      if (binding.isEmpty()) {
        return DefaultRouter.held(s);
      }
      remember(s.sessionKey(), binding.get());
      return run(s);
    };
    return continueWith(sel, store.get(sel.sessionKey()), step);
  }

  /**
   * No replica takes new sessions (every one draining, or the rest at their limits): only a session
   * already bound to a usable replica is routed, there; anything else is not routed.
   */
  Outcome boundOnly(Selection sel) {
    StoreGuard.Admission admission = store.admit();
    if (admission == StoreGuard.Admission.SKIP) {
      return sel.decided(knownOnly(sel));
    }
    boolean probe = admission == StoreGuard.Admission.PROBE;
    Step<Optional<Binding>> step = (s, binding, ex) -> {
      if (ex != null) {
        store.failed(ex, probe);
        return s.decided(knownOnly(s));
      }
      store.succeeded(probe);
      if (binding.isPresent()) {
        Binding b = binding.get();
        remember(s.sessionKey(), b);
        int i = s.indexOf(b.replicaId());
        if (i >= 0 && s.usable(i) && limits.admit(s, i)) {
          return s.decided(decide.session(s, i, RoutingReason.SESSION_AFFINITY, b.generation(),
              true));
        }
      }
      return s.decided(decide.notRouted(s));
    };
    return continueWith(sel, store.get(sel.sessionKey()), step);
  }

  private RoutingDecision knownOnly(Selection sel) {
    Known known = lastKnown.getIfPresent(sel.sessionKey());
    int i = known == null ? -1 : sel.indexOf(known.replicaId());
    return i >= 0 && sel.usable(i) && limits.admit(sel, i)
        ? decide.degraded(sel, i) : decide.notRouted(sel);
  }

  private Outcome afterClaim(Selection sel, Binding b, @Nullable Throwable ex) {
    if (ex != null) {
      store.failed(ex);
      return sel.decided(degraded(sel, timedOut(ex)));
    }
    store.succeeded();
    Degraded reconcile = degradedSessions.estimatedSize() == 0
        ? null : degradedSessions.asMap().remove(sel.sessionKey());
    if (reconcile != null && !reconcile.replicaId().equals(b.replicaId())
        && reconcile.replicaId().equals(sel.states[sel.candidate].id())
        && b.generation() <= reconcile.knownGeneration()) {
      return repin(sel, b, RepinCause.RECONCILED, 0);
    }
    return afterBinding(sel, b, 0);
  }

  /**
   * Records how long the session took to come back: since the last turn, as the binding's context
   * says when another router routed it, else since this router did; and, when this router routed
   * the last turn, how much of that turn's prompt this one keeps.
   */
  private void returned(Selection sel, Binding b, @Nullable Known known) {
    long now = clock.millis();
    long[] marks = known == null ? null : known.marks;
    int prev = known == null ? 0 : known.lastBlocks;
    int blocks = sel.blocks;
    if (reuse != null && marks != null && prev > 0 && blocks > 0) {
      int kept = 0;
      for (int m = MARKS.length - 1; m >= 0 && kept == 0; m--) {
        int at = mark(prev, m);
        if (at < blocks && sel.hashes[at] == marks[m]) {
          kept = at + 1;
        }
      }
      // A prompt identical to the last is a retry or a re-offer of a held turn, not a new turn.
      if (!(kept == prev && prev == blocks)) {
        reuse.record((double) kept / prev);
      }
    }
    SessionContext context = b.context();
    long since = context != null ? context.ageMillis() : known != null ? now - known.routedMillis
        : -1;
    if (since >= 0) {
      returns.record(since / 1000.0);
    }
    if (known != null) {
      known.routedMillis = now;
    }
  }

  /**
   * The median time sessions take to come back to this router, seconds; 0 until enough have.
   */
  double returnSeconds() {
    return returns.get();
  }

  /**
   * The median share of the session's last prompt routed by this router that a returning turn
   * keeps as its prefix (its last mark matched: all, seven eighths, three quarters, half, or
   * nothing); 0 until enough have come back (or without holding). Of the last prompt, not of the
   * turn's own: turns routed meanwhile by other gateways only lengthen the turn.
   */
  double reuseShare() {
    return reuse == null ? 0 : reuse.get();
  }

  /** Remembers the prompt just routed for the session, for {@link #reuseShare}. */
  private void prompted(Selection sel) {
    if (reuse == null || sel.blocks == 0) {
      return;
    }
    Known k = lastKnown.getIfPresent(sel.sessionKey());
    long[] marks = k == null ? null : k.marks;
    if (k != null && marks != null) {
      for (int m = 0; m < MARKS.length; m++) {
        marks[m] = sel.hashes[mark(sel.blocks, m)];
      }
      k.lastBlocks = sel.blocks;
    }
  }

  /** The block at mark {@code m} of a prompt of {@code blocks} full blocks. */
  private static int mark(int blocks, int m) {
    return Math.max(0, (int) Math.ceil(blocks * MARKS[m]) - 1);
  }

  /** Whether a failed claim timed out (it may still land), wrapped or not. */
  private static boolean timedOut(Throwable ex) {
    for (Throwable t = ex; t != null; t = t.getCause()) {
      if (t instanceof TimeoutException) {
        return true;
      }
      if (!(t instanceof java.util.concurrent.CompletionException
          || t instanceof java.util.concurrent.ExecutionException)) {
        return false;
      }
    }
    return false;
  }

  private Outcome afterBinding(Selection sel, Binding b, int attempt) {
    int c = sel.candidate;
    Known known = lastKnown.getIfPresent(sel.sessionKey());
    int bound = b.replicaId().equals(sel.states[c].id()) ? c : sel.indexOf(b.replicaId());
    // The index knows only what this router sent; the binding says what another router sent last.
    if (bound >= 0 && b.context() != null) {
      score.credit(sel, bound, b.context());
    }
    if (!b.written()) {
      returned(sel, b, known);
    }
    if (bound == c) {
      RoutingReason reason = attempt > 0 ? RoutingReason.SESSION_ADOPTED
          : b.written() ? RoutingReason.SESSION_CLAIMED : RoutingReason.SESSION_AFFINITY;
      remember(sel.sessionKey(), b, known);
      prompted(sel);
      return sel.decided(decide.session(sel, c, reason, b.generation(), !b.written()));
    }
    RepinCause cause = policy.keep(sel, bound);
    if (cause == RepinCause.REPLICA_AT_LIMIT) {
      // A returning turn waits for its replica: moving it for load would recompute its context.
      sel.reservations.release(sel, c);
      remember(sel.sessionKey(), b, known);
      return sel.decided(holding ? DefaultRouter.HELD : decide.atLimit(sel));
    }
    if (cause == null) {
      sel.reservations.release(sel, c);
      RoutingReason reason = attempt > 0 ? RoutingReason.SESSION_ADOPTED
          : RoutingReason.SESSION_AFFINITY;
      remember(sel.sessionKey(), b, known);
      prompted(sel);
      return sel.decided(decide.session(sel, bound, reason, b.generation(), true));
    }
    return repin(sel, b, cause, attempt);
  }

  private Outcome repin(Selection sel, Binding old, RepinCause cause, int attempt) {
    int c = sel.candidate;
    String target = sel.states[c].id();
    if (attempt >= MAX_REPIN_ATTEMPTS) {
      return sel.decided(decide.degraded(sel, c));
    }
    Step<Binding> step = (s, nb, ex) -> {
      if (ex != null) {
        store.failed(ex);
        // The repin may still land: the candidate is where the store will point if it does.
        degradedSessions.put(s.sessionKey(), new Degraded(target, old.generation()));
        return s.decided(decide.degraded(s, c));
      }
      store.succeeded();
      if (nb.written()) {
        remember(s.sessionKey(), nb);
        prompted(s);
        listeners.repin(s.sessionKey(), old.replicaId(), target, cause);
        return s.decided(decide.repinned(s, c, nb.generation(), cause, old.replicaId()));
      }
      return afterBinding(s, nb, attempt + 1);
    };
    return continueWith(sel, store.repin(sel.sessionKey(), old.generation(), target, sel.turn(writer),
        late), step);
  }

  /** Remembers a binding the store confirmed, unless this router knows a newer one. */
  private void remember(BindingKey key, Binding b) {
    remember(key, b, lastKnown.getIfPresent(key));
  }

  /**
   * As {@link #remember(BindingKey, Binding)}, with what this router knew already read: an
   * unchanged binding writes nothing; a change is a compare-and-set on what was known, so a late
   * answer heard on the store's thread at the same time is never replaced by an older binding.
   */
  private void remember(BindingKey key, Binding b, @Nullable Known known) {
    Known fresh = null;
    while (known == null || known.generation() < b.generation()
        || known.generation() == b.generation() && !known.replicaId().equals(b.replicaId())) {
      if (fresh == null) {
        fresh = new Known(b.replicaId(), b.generation(), clock.millis(), holding);
      }
      if (known == null ? lastKnown.asMap().putIfAbsent(key, fresh) == null
          : lastKnown.asMap().replace(key, known, fresh)) {
        return;
      }
      known = lastKnown.getIfPresent(key);
    }
  }

  /**
   * An answer that came after its call timed out: the store's binding, which this router now
   * follows; a degraded move it makes moot is not reconciled.
   */
  private void heard(BindingKey key, Binding b) {
    store.succeeded(); // a late answer: the store is up, only slow, so its breaker stays closed
    remember(key, b);
    Degraded d = degradedSessions.getIfPresent(key);
    if (d != null && (b.generation() > d.knownGeneration()
        || d.replicaId().equals(b.replicaId()))) {
      degradedSessions.asMap().remove(key, d);
    }
  }

  /**
   * Where a decision goes without the store's answer: the last binding heard of, if usable; else,
   * with the claim in flight, the candidate; else rendezvous over the healthy replicas. Remembers
   * where the session went for reconciliation.
   */
  private RoutingDecision degraded(Selection sel, boolean claimInFlight) {
    BindingKey key = sel.sessionKey();
    int c = sel.candidate;
    int chosen = -1;
    Known known = lastKnown.getIfPresent(key);
    if (known != null) {
      int k = sel.indexOf(known.replicaId());
      if (k >= 0 && sel.usable(k) && (k == c || limits.admit(sel, k))) {
        chosen = k;
      }
    }
    if (chosen < 0 && claimInFlight) {
      chosen = c;
    }
    if (chosen < 0) {
      chosen = rendezvous(sel, key);
    }
    if (chosen != c) {
      sel.reservations.release(sel, c);
    }
    String id = sel.states[chosen].id();
    if (known == null || !known.replicaId().equals(id)) {
      degradedSessions.put(key, new Degraded(id, known == null ? 0 : known.generation()));
    }
    return decide.degraded(sel, chosen);
  }

  /** The healthy replica rendezvous hashing gives the session (the candidate if none admits). */
  private int rendezvous(Selection sel, BindingKey key) {
    int c = sel.candidate;
    long keyHash = Rendezvous.keyHash(key.sessionId()) ^ hasher.chainSeed(key.model(),
        key.tenant());
    boolean[] tried = new boolean[sel.size];
    while (true) {
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
        return c;
      }
      if (best == c || limits.admit(sel, best)) {
        return best;
      }
      tried[best] = true;
    }
  }

  /** A step on the store's answer: {@code answer} is null exactly when {@code ex} is set. */
  private interface Step<T> {
    Outcome apply(Selection sel, T answer, @Nullable Throwable ex);
  }

  /** Runs {@code step} now if the store already answered, else when it does (detaching state). */
  @SuppressWarnings("NullAway") // a failed answer is null, and every step reads ex first
  private static <T> Outcome continueWith(Selection sel, CompletableFuture<T> f, Step<T> step) {
    if (f.isDone()) {
      T answer = null;
      Throwable ex = null;
      try {
        answer = f.join();
      } catch (RuntimeException e) {
        ex = e.getCause() != null ? e.getCause() : e;
      }
      return step.apply(sel, answer, ex);
    }
    Selection own = sel.detached();
    return new Outcome.Pending(f.handle((answer, ex) -> step.apply(own, answer, ex))
        .thenCompose(Outcome::stage));
  }
}
