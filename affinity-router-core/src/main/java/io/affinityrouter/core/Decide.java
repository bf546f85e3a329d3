package io.affinityrouter.core;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.affinityrouter.Replica;
import io.affinityrouter.RepinCause;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.ScoreBreakdown;
import java.time.Duration;
import java.time.InstantSource;
import org.jspecify.annotations.Nullable;

/**
 * The last stage of {@code select}: routes the request to the replica chosen (opens the lease,
 * records the prompt in the prefix index, builds the {@link RoutingDecision}, notifies the
 * listeners), or says why nothing can take the request. Asks a sleeping replica to wake, once per replica and model per retry
 * interval. Thread-safe.
 */
final class Decide {
  // 100 ms of estimated queue wakes sleeping capacity: 1 s never fired on short agent turns.
  static final Duration WAKE_THRESHOLD = Duration.ofMillis(100);

  private final LoadTracker tracker;
  private final PrefixIndex index;
  private final CostModel costModel;
  private final Duration atLimitRetryAfter;
  private final Duration unavailableRetryAfter;
  private final double wakeThresholdSeconds;
  private final Cache<String, Boolean> recentWakes;
  private final Listeners listeners;
  private final boolean notifies;

  Decide(LoadTracker tracker, PrefixIndex index, CostModel costModel, Duration atLimitRetryAfter, Duration unavailableRetryAfter,
      Duration wakeThreshold, InstantSource clock, Listeners listeners, boolean notifies) {
    this.tracker = tracker;
    this.index = index;
    this.costModel = costModel;
    this.atLimitRetryAfter = atLimitRetryAfter;
    this.unavailableRetryAfter = unavailableRetryAfter;
    this.wakeThresholdSeconds = wakeThreshold.toNanos() / 1e9;
    this.recentWakes = Caffeine.newBuilder().maximumSize(10_000)
        .expireAfterWrite(unavailableRetryAfter).ticker(() -> clock.millis() * 1_000_000L)
        .executor(Runnable::run).build();
    this.listeners = listeners;
    this.notifies = notifies;
  }

  // One entry point per kind of route; a value object per decision measured 40 B that escape
  // analysis did not remove.

  /** A request without a session, to the picker's choice {@code i}. */
  RoutingDecision best(Selection sel, int i) {
    return routed(sel, i, RoutingReason.BEST_SCORE, 0, false, null, null, false);
  }

  /** A session routed to {@code i} without the store's answer. */
  RoutingDecision degraded(Selection sel, int i) {
    return routed(sel, i, RoutingReason.DEGRADED_FALLBACK, 0, true, null, null, false);
  }

  /**
   * A session claimed, kept or adopted on {@code i}, where the store's binding points.
   * {@code bound}: its existing binding was kept.
   */
  RoutingDecision session(Selection sel, int i, RoutingReason reason, long generation,
      boolean bound) {
    return routed(sel, i, reason, generation, false, null, null, bound);
  }

  /** A session moved to {@code i}, off {@code previous}, by a compare-and-set that won. */
  RoutingDecision repinned(Selection sel, int i, long generation, RepinCause cause,
      String previous) {
    return routed(sel, i, RoutingReason.SESSION_REPINNED, generation, false, cause, previous,
        false);
  }

  /** Opens the lease on replica {@code i}, records the prompt there, notifies, returns. */
  private RoutingDecision routed(Selection sel, int i, RoutingReason reason, long generation,
      boolean degraded, @Nullable RepinCause cause, @Nullable String previous, boolean bound) {
    ReplicaState state = sel.states[i];
    long cached = sel.cachedTokens(i);
    double prefillSeconds = sel.prefill[i];
    long uncached = sel.promptTokens - cached;
    sel.reservations.handOff(i);
    var lease = tracker.open(state, sel.requestTokens, uncached, sel.expectedOutput,
        costModel.prefillSeconds(uncached, cached, 1.0));
    if (sel.key != null) {
      tracker.countTurn(state, tracker.nowMillis());
    }
    if (state.ordinal() >= 0 && sel.blocks > 0) {
      index.record(sel.hashes, sel.blocks, state.ordinal(), sel.matched[i]);
    }
    double total = sel.queue[i] + prefillSeconds - sel.plugin[i];
    var scores = new ScoreBreakdown(bound,
        sel.promptTokens == 0 ? 0 : (double) cached / sel.promptTokens, prefillSeconds,
        sel.queue[i], sel.plugin[i], total);
    var b = RoutingDecision.routed(reason, sel.replicas.get(i), lease).scores(scores)
        .prefixBlocks(sel.matched[i], sel.blocks).binding(generation, degraded);
    if (cause != null && previous != null) {
      b.repinnedFrom(previous, cause);
    }
    RoutingDecision d = b.build();
    notify(sel, d);
    return d;
  }

  /** A returning turn whose bound replica is at its limit: refused, the session stays pinned. */
  RoutingDecision atLimit(Selection sel) {
    RoutingDecision d = RoutingDecision.notRouted(RoutingReason.ALL_AT_LIMIT, atLimitRetryAfter);
    notify(sel, d);
    return d;
  }

  /** Why no replica takes the request: at limit, waking the model, loading, or none. */
  RoutingDecision notRouted(Selection sel) {
    boolean atLimit = false;
    boolean asleep = false;
    boolean loading = false;
    boolean activeHealthy = false;
    for (int i = 0; i < sel.size; i++) {
      byte st = sel.status[i];
      atLimit |= st == Selection.AT_LIMIT;
      asleep |= st == Selection.ASLEEP;
      loading |= st == Selection.LOADING;
      activeHealthy |= st == Selection.OK || st == Selection.DRAINING || st == Selection.AT_LIMIT;
    }
    RoutingDecision d;
    if (atLimit) {
      d = RoutingDecision.notRouted(RoutingReason.ALL_AT_LIMIT, atLimitRetryAfter);
    } else if (!activeHealthy && asleep) {
      String woken = wake(sel);
      d = RoutingDecision.modelWaking(woken, unavailableRetryAfter);
    } else if (loading) {
      d = RoutingDecision.notRouted(RoutingReason.MODEL_LOADING, unavailableRetryAfter);
    } else {
      d = RoutingDecision.notRouted(RoutingReason.NO_REPLICA, unavailableRetryAfter);
    }
    notify(sel, d);
    return d;
  }

  /**
   * Asks for the sleeping capacity when the work queued on the candidate is long; routing goes on
   * as usual.
   */
  void wakeIfBusy(Selection sel) {
    int c = sel.candidate;
    if (sel.queue[c] < wakeThresholdSeconds || !sel.any(Selection.ASLEEP)) {
      return;
    }
    // Work queued says capacity is short; the sessions a replica holds, its running term, do not.
    double held = costModel.runningSeconds(
        CostModel.running(sel.replicas.get(c).load(), sel.states[c]));
    if (sel.queue[c] - held >= wakeThresholdSeconds) {
      wake(sel);
    }
  }

  /** Chooses the sleeping replica to wake (rendezvous on the model: gateways agree) and asks once. */
  private String wake(Selection sel) {
    String model = sel.model == null ? "" : sel.model;
    long key = Rendezvous.keyHash(model);
    int winner = -1;
    long top = Long.MIN_VALUE;
    for (int i = 0; i < sel.size; i++) {
      if (sel.status[i] == Selection.ASLEEP) {
        long score = Rendezvous.score(key, sel.states[i].idHash());
        if (winner < 0 || score > top) {
          top = score;
          winner = i;
        }
      }
    }
    Replica r = sel.replicas.get(winner);
    String wakeKey = r.id() + '\u0000' + model;
    if (recentWakes.asMap().putIfAbsent(wakeKey, Boolean.TRUE) == null) {
      listeners.wakeRequested(r, model);
    }
    return r.id();
  }

  private void notify(Selection sel, RoutingDecision d) {
    if (notifies && !listeners.isEmpty()) { // else the fleet gate notifies the final decision
      listeners.decision(sel.request, d, System.nanoTime() - sel.startNanos);
    }
  }
}
