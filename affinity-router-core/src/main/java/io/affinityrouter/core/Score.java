package io.affinityrouter.core;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.spi.ReplicaScorer;
import io.affinityrouter.spi.SessionContext;
import java.time.InstantSource;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The second stage of {@code select}: the cost terms of every replica that could take the request,
 * in seconds of estimated time to first token. How much of the prompt it holds (the prefix index,
 * aged by how long its KV cache keeps blocks), its queue, the prefill left to compute, and the
 * plugins' scores; the ramp weight of a fresh replica. Records the affinity budget's sample.
 * Thread-safe; per-decision state lives in the {@link Selection}.
 */
final class Score {
  // Replicas rank by estimated TTFT itself: queue and prefill are seconds of the same engine.
  static final double RECOMPUTE_WEIGHT = 1.0;
  // Queue seconds per unit of fleet pressure: the repin slack, a few scrapes of stale load, below
  // which a queue is noise rather than pressure.
  static final double PRESSURE_SCALE_SECONDS = RepinPolicy.SLACK_SECONDS;
  // The most a recomputed second weighs: the repin's savings multiple, so a new request leaves a
  // cache under pressure no more readily than a session leaves its own.
  static final double MAX_PRESSURE = RepinPolicy.SAVINGS_MULTIPLE;

  private final PrefixIndex index;
  private final LoadTracker tracker;
  private final CostModel costModel;
  private final TopKPicker picker;
  private final AffinityBudget budget;
  private final double recomputeWeight;
  private final ReplicaScorer[] scorers;
  private final @Nullable LoadSharing loadSharing; // null: no exchange
  private final Listeners listeners;
  private final InstantSource clock;

  Score(PrefixIndex index, LoadTracker tracker, CostModel costModel, TopKPicker picker,
      AffinityBudget budget, double recomputeWeight, List<ReplicaScorer> scorers,
      @Nullable LoadSharing loadSharing, Listeners listeners, InstantSource clock) {
    this.index = index;
    this.tracker = tracker;
    this.costModel = costModel;
    this.picker = picker;
    this.budget = budget;
    this.recomputeWeight = recomputeWeight;
    this.scorers = scorers.toArray(new ReplicaScorer[0]);
    this.loadSharing = loadSharing;
    this.listeners = listeners;
    this.clock = clock;
  }

  void run(Selection sel, Selection.Scratch s) {
    int count = index.match(sel.hashes, sel.blocks, s.depthByOrdinal, s.ordinals);
    long now = clock.millis();
    if (loadSharing != null) {
      loadSharing.maybeExchange(now);
    }
    double bestUsablePrefill = Double.POSITIVE_INFINITY;
    double shortestQueue = Double.POSITIVE_INFINITY;
    for (int i = 0; i < sel.size; i++) {
      byte st = sel.status[i];
      if (st != Selection.OK && st != Selection.DRAINING && st != Selection.AT_LIMIT) {
        continue;
      }
      Replica r = sel.replicas.get(i);
      ReplicaState state = sel.states[i];
      int ord = state.ordinal();
      sel.matched[i] = ord >= 0 ? s.depthByOrdinal[ord] : 0;
      ReplicaLoad load = r.load();
      state.observeEngineWritten(load.kvWrittenTokens(), now);
      state.observeLoad(load);
      if (sel.matched[i] > 0) { // exact (event-reported) blocks do not age; the router's own do
        sel.matched[i] = residentDepth(sel.hashes, sel.matched[i], load, state, now);
      }
      int running = CostModel.running(load, state);
      double slowdown = costModel.slowdown(running);
      sel.slowdown[i] = slowdown;
      long cached = sel.cachedTokens(i);
      // Only the blocks the replica lacks need free KV there: its cached prefix is reused.
      sel.queue[i] = costModel.queueSeconds(load, state, tracker, sel.requestTokens - cached,
          running, slowdown, now);
      sel.prefill[i] = costModel.prefillSeconds(sel.promptTokens - cached, cached, slowdown);
      if (st != Selection.AT_LIMIT) {
        bestUsablePrefill = Math.min(bestUsablePrefill, sel.prefill[i]);
      }
      if (st == Selection.OK) {
        shortestQueue = Math.min(shortestQueue, sel.queue[i]);
      }
      sel.plugin[i] = pluginSeconds(sel.request, r);
      sel.cost[i] = sel.queue[i] + recomputeWeight * sel.prefill[i] - sel.plugin[i];
      s.ramp[i] = picker.rampWeight(r.readySince().toEpochMilli(), now);
      s.idHash[i] = state.idHash();
    }
    for (int j = 0; j < count; j++) {
      s.depthByOrdinal[s.ordinals[j]] = 0;
    }
    budget.record(bestUsablePrefill);
    chargeRecompute(sel, bestUsablePrefill, shortestQueue);
  }

  /**
   * Charges each replica the prefill it would add beyond the least any replica needs, times the
   * fleet's pressure: the shortest queue there is, in units of {@link #PRESSURE_SCALE_SECONDS}, at
   * most {@link #MAX_PRESSURE}. With an idle replica the charge is nothing; when every replica has
   * a queue, work recomputed anywhere delays the requests queued behind it, so a cache is left only
   * for a queue that much longer.
   */
  private static void chargeRecompute(Selection sel, double leastPrefill, double shortest) {
    if (!(shortest > 0) || shortest == Double.POSITIVE_INFINITY) {
      return;
    }
    double pressure = Math.min(MAX_PRESSURE, shortest / PRESSURE_SCALE_SECONDS);
    for (int i = 0; i < sel.size; i++) {
      byte st = sel.status[i];
      if (st == Selection.OK || st == Selection.DRAINING || st == Selection.AT_LIMIT) {
        sel.cost[i] += pressure * Math.max(0, sel.prefill[i] - leastPrefill);
      }
    }
  }

  /**
   * How much of a matched prefix the replica probably still holds. Its KV cache evicts the least
   * recently used blocks, so a block this router last sent there longer ago than the cache takes to
   * turn over is taken as gone ({@link PrefixIndex#freshDepth}). The write rate is the engine's own
   * when its load carries a write counter, else what this router sends there. Blocks the engine's
   * KV events reported are held until they remove them, so only the router's own records age.
   */
  private int residentDepth(long[] hashes, int depth, ReplicaLoad load, ReplicaState state,
      long now) {
    double lifetime = lifetimeSeconds(load, state, now);
    if (Double.isNaN(lifetime) || Double.isInfinite(lifetime)) {
      return depth;
    }
    return index.freshDepth(hashes, depth, (long) Math.min(lifetime * 1000, Long.MAX_VALUE), now,
        state.ordinal());
  }

  /**
   * How long a block written now stays in the replica's cache: by the engine's write counter when
   * its load carries one, else by what this router sends there; NaN when the capacity is unknown.
   */
  static double lifetimeSeconds(ReplicaLoad load, ReplicaState state, long now) {
    double engineRate = state.engineWrittenTokensPerSecond(now);
    double rate = engineRate > 0 ? engineRate : state.writtenTokensPerSecond(now);
    return state.cacheLifetimeSeconds(load, rate);
  }

  /**
   * Credits replica {@code i} with the session context another router left there (its binding's),
   * when that is more than the prefix index knows, and recomputes the replica's terms: the prefill
   * left, and the queue, whose KV-wait term needs room only for the tokens it lacks.
   */
  void credit(Selection sel, int i, SessionContext context) {
    long now = clock.millis();
    Replica r = sel.replicas.get(i);
    ReplicaLoad load = r.load();
    ReplicaState state = sel.states[i];
    long tokens = contextCredit(sel.hashes, sel.blocks, sel.promptTokens, context,
        lifetimeSeconds(load, state, now));
    if (tokens <= sel.cachedTokens(i)) {
      return;
    }
    sel.credited = i;
    sel.creditedTokens = tokens;
    int running = CostModel.running(load, state);
    sel.queue[i] = costModel.queueSeconds(load, state, tracker, sel.requestTokens - tokens,
        running, sel.slowdown[i], now);
    sel.prefill[i] = costModel.prefillSeconds(sel.promptTokens - tokens, tokens, sel.slowdown[i]);
    sel.cost[i] = sel.queue[i] + recomputeWeight * sel.prefill[i] - sel.plugin[i];
  }

  /**
   * The prompt tokens a session context vouches for: none unless the prompt extends the context's
   * prompt (its block {@code anchorBlocks - 1} has the anchor's chained hash, so every block before
   * it matches too); then the context's prompt and output, at most the prompt, while the context is
   * younger than the replica's cache lifetime ({@code lifetimeSeconds}; NaN or infinite: no
   * ageing), none once older: the cache evicts the least recently used blocks first.
   */
  static long contextCredit(long[] hashes, int blocks, int promptTokens, SessionContext context,
      double lifetimeSeconds) {
    int anchor = context.anchorBlocks();
    if (anchor == 0 || anchor > blocks || hashes[anchor - 1] != context.anchorHash()) {
      return 0;
    }
    if (lifetimeSeconds >= 0 && lifetimeSeconds < Double.POSITIVE_INFINITY
        && context.ageMillis() > lifetimeSeconds * 1000) {
      return 0;
    }
    return Math.min(promptTokens, (long) context.promptTokens() + context.outputTokens());
  }

  private double pluginSeconds(RoutingRequest request, Replica r) {
    double total = 0;
    for (ReplicaScorer sc : scorers) {
      try {
        double v = sc.score(request, r);
        if (v >= 0 && v <= 1) {
          total += v * sc.weightSeconds();
        } else {
          listeners.pluginFailure(sc.name(), new IllegalArgumentException(
              "score: " + v + " (expected: 0..1)"));
        }
      } catch (RuntimeException e) {
        listeners.pluginFailure(sc.name(), e);
      }
    }
    return total;
  }
}
