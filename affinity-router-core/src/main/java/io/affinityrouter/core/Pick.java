package io.affinityrouter.core;

import java.time.InstantSource;
import java.util.concurrent.ThreadLocalRandom;
import java.util.random.RandomGenerator;
import org.jspecify.annotations.Nullable;

/**
 * The third stage of {@code select}: chooses the candidate replica and reserves the request's
 * place there. Among the OK replicas (never a draining one: it takes no new work): the one holding
 * most of the prompt if it is within the affinity budget, else least-cost-top-k, with a placement
 * key for a prompt no replica holds. A session is placed by the sessions each replica already
 * holds too: their next turns are work there that no queue shows yet. A replica that turns out
 * full is skipped. Thread-safe.
 */
final class Pick {
  // Within the budget a holder may queue up to 4 × the prefill it saves: a long shared prefix
  // wins, a 2k-token one does not outweigh half a second of queue.
  static final double HOLDER_SAVINGS_MULTIPLE = 4;
  // 128 leading tokens (8 blocks of 16) identify a prompt family.
  static final int PLACEMENT_BLOCKS = 8;

  private final TopKPicker picker;
  private final Limits limits;
  private final AffinityBudget budget;
  private final double holderSavingsMultiple;
  private final int placementBlocks;
  private final @Nullable RandomGenerator random; // null: ThreadLocalRandom
  private final InstantSource clock;
  private final CostModel costModel;
  private final LoadTracker tracker;

  Pick(TopKPicker picker, Limits limits, AffinityBudget budget, double holderSavingsMultiple,
      int placementBlocks, @Nullable RandomGenerator random, InstantSource clock,
      CostModel costModel, LoadTracker tracker) {
    this.costModel = costModel;
    this.tracker = tracker;
    this.picker = picker;
    this.limits = limits;
    this.budget = budget;
    this.holderSavingsMultiple = holderSavingsMultiple;
    this.placementBlocks = placementBlocks;
    this.random = random;
    this.clock = clock;
  }

  /** The admitted candidate's index, or -1 if no replica can take the request. */
  int run(Selection sel, Selection.Scratch s) {
    return run(sel, s, false);
  }

  /**
   * As {@link #run(Selection, Selection.Scratch)}; {@code placing}: the request's session is one
   * this router has not routed (new, or another router's), so where it goes is where its future
   * turns go. For a session it routed, the candidate only weighs a repin, which weighs queues.
   */
  int run(Selection sel, Selection.Scratch s, boolean placing) {
    boolean anyMatch = false;
    for (int i = 0; i < sel.size; i++) {
      s.allowed[i] = sel.status[i] == Selection.OK;
      anyMatch |= s.allowed[i] && sel.matched[i] > 0;
    }
    // A cold prompt goes by its placement key, which gateways that never talk agree on.
    boolean charged = placing && (anyMatch || sel.blocks == 0) && chargeSessions(sel, s);
    try {
      return choose(sel, s, anyMatch, charged);
    } finally {
      if (charged) { // the charge ranks candidates only: the keep rule weighs queues
        for (int i = 0; i < sel.size; i++) {
          sel.cost[i] -= s.charge[i];
        }
      }
    }
  }

  /**
   * Adds to a session's cost on each replica the sessions bound there beyond those running, at
   * the cost of a running sequence: between two turns a session runs nowhere, yet its next turn
   * comes back. The bound sessions are the session turns routed there, by this router and, through
   * a {@link io.affinityrouter.spi.LoadExchange}, by the others, over the median return interval
   * (Little's law). Nothing before that interval is known.
   */
  private boolean chargeSessions(Selection sel, Selection.Scratch s) {
    double window = tracker.turnWindowSeconds();
    if (!(window > 0)) {
      return false;
    }
    long now = clock.millis();
    for (int i = 0; i < sel.size; i++) {
      s.charge[i] = 0;
      byte st = sel.status[i];
      if (st != Selection.OK && st != Selection.DRAINING && st != Selection.AT_LIMIT) {
        continue;
      }
      ReplicaState state = sel.states[i];
      double bound = (state.turnsPerSecond(now, window) + state.peerTurnsPerSecond()) * window;
      int running = CostModel.running(sel.replicas.get(i).load(), state);
      s.charge[i] = costModel.sessionSeconds(Math.max(0, bound - running));
      sel.cost[i] += s.charge[i];
    }
    return true;
  }

  private int choose(Selection sel, Selection.Scratch s, boolean anyMatch, boolean charged) {
    if (anyMatch) {
      int holder = holderWithinBudget(sel, s, charged ? s.charge : null);
      if (holder >= 0 && limits.admit(sel, holder)) {
        return holder;
      }
    }
    long placement = TopKPicker.NO_PLACEMENT;
    if (!anyMatch && sel.blocks > 0) {
      placement = sel.hashes[Math.min(sel.blocks, placementBlocks) - 1];
    }
    RandomGenerator rnd = random != null ? random : ThreadLocalRandom.current();
    while (true) {
      int c = picker.pick(sel.cost, s.allowed, s.ramp, s.idHash, sel.size, placement, rnd, s.best);
      if (c < 0) {
        return -1;
      }
      if (placement != TopKPicker.NO_PLACEMENT) {
        c = longestLived(sel, s, c);
      }
      if (limits.admit(sel, c)) {
        return c;
      }
      s.allowed[c] = false;
      sel.status[c] = Selection.AT_LIMIT;
    }
  }

  /**
   * Where a cold prompt is written in full: among the near-equal replicas, the one whose cache
   * lives longest, so the write evicts the oldest blocks there are. Only the engines' write
   * counters count here, which every gateway reads alike; without them the placement key's choice
   * stands, so gateways that never talk still send a new prompt family to one replica.
   */
  private int longestLived(Selection sel, Selection.Scratch s, int picked) {
    long now = clock.millis();
    for (int i = 0; i < sel.size; i++) {
      double rate = s.allowed[i] ? sel.states[i].engineWrittenTokensPerSecond(now) : 0;
      s.lifetime[i] = rate > 0 ? sel.states[i].cacheLifetimeSeconds(
          sel.replicas.get(i).load(), rate) : Double.NaN;
    }
    return picker.longestLived(picked, sel.cost, s.allowed, s.ramp, s.lifetime, sel.size);
  }

  /** Whether replica {@code i} is ramping up behind an allowed replica ready longer. */
  private static boolean rampingBehind(Selection.Scratch s, int i, int n) {
    for (int j = 0; j < n; j++) {
      if (s.allowed[j] && s.ramp[j] > s.ramp[i]) {
        return true;
      }
    }
    return false;
  }

  /**
   * The allowed replica holding most of the prompt (the cheapest of equals) if its estimated TTFT is
   * within the affinity budget and its extra queue over the cheapest allowed replica (with the
   * sessions' {@code charge}, if any) is at most {@code holderSavingsMultiple} × the prefill it
   * saves, and, when placing a session, it is not ramping up behind its elders; else -1.
   */
  private int holderWithinBudget(Selection sel, Selection.Scratch s, double @Nullable [] charge) {
    double budgetSeconds = budget.seconds();
    if (budgetSeconds <= 0) {
      return -1;
    }
    boolean[] allowed = s.allowed;
    int holder = -1;
    int cheapest = -1;
    for (int i = 0; i < sel.size; i++) {
      if (!allowed[i]) {
        continue;
      }
      if (cheapest < 0 || sel.cost[i] < sel.cost[cheapest]) {
        cheapest = i;
      }
      if (sel.matched[i] > 0 && (holder < 0 || sel.matched[i] > sel.matched[holder]
          || sel.matched[i] == sel.matched[holder] && sel.cost[i] < sel.cost[holder])) {
        holder = i;
      }
    }
    if (holder < 0 || sel.queue[holder] + sel.prefill[holder] > budgetSeconds) {
      return -1;
    }
    if (charge != null && rampingBehind(s, holder, sel.size)) {
      return -1; // new sessions reach a fresher replica through the ramp, not all at once
    }
    double saved = sel.prefill[cheapest] - sel.prefill[holder];
    double extra = sel.queue[holder] - sel.queue[cheapest]
        + (charge == null ? 0 : charge[holder] - charge[cheapest]);
    return extra <= holderSavingsMultiple * saved ? holder : -1;
  }
}
