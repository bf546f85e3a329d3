package io.affinityrouter.core;

import io.affinityrouter.RepinCause;
import org.jspecify.annotations.Nullable;

/**
 * Whether a session's bound replica keeps it. It does while the replica is in the list, healthy (or
 * draining), serves the model awake, is under its limits, and its estimated TTFT with the
 * session's cache is within the affinity budget, or within the overload threshold of the
 * candidate's ({@code repinSlack} plus {@code repinSavingsMultiple} × the prefill the cache saves),
 * or the candidate itself has a queue longer than the slack: under fleet-wide pressure a move
 * recomputes the context into another queue and only adds to the fleet's work. Immutable.
 */
final class RepinPolicy {
  // A session waits up to 8 × the prefill its cache saves: 6, 8 and 12 measured alike in the
  // simulator, 4 moved long sessions off their caches too early.
  static final double SAVINGS_MULTIPLE = 8;
  // A few 100 ms scrapes of stale load: a turn whose cache saves little does not move for a gap
  // the scraped view cannot resolve.
  static final double SLACK_SECONDS = 0.35;

  private final CostModel costModel;
  private final AffinityBudget budget;
  private final Limits limits;
  private final double recomputeWeight;
  private final double repinSavingsMultiple;
  private final double repinSlackSeconds;

  RepinPolicy(CostModel costModel, AffinityBudget budget, Limits limits, double recomputeWeight,
      double repinSavingsMultiple, double repinSlackSeconds) {
    this.costModel = costModel;
    this.budget = budget;
    this.limits = limits;
    this.recomputeWeight = recomputeWeight;
    this.repinSavingsMultiple = repinSavingsMultiple;
    this.repinSlackSeconds = repinSlackSeconds;
  }

  /**
   * Null if replica {@code bound} keeps the session (and admitted the request), else why it cannot.
   */
  @Nullable RepinCause keep(Selection sel, int bound) {
    if (bound < 0) {
      return RepinCause.REPLICA_GONE;
    }
    switch (sel.status[bound]) {
      case Selection.UNHEALTHY:
        return RepinCause.REPLICA_UNHEALTHY;
      case Selection.FILTERED:
        return RepinCause.REPLICA_FILTERED;
      case Selection.NO_MODEL:
      case Selection.ASLEEP:
      case Selection.LOADING:
        return RepinCause.MODEL_UNAVAILABLE;
      case Selection.AT_LIMIT:
        return RepinCause.REPLICA_AT_LIMIT;
      default:
        break;
    }
    long cached = sel.cachedTokens(bound);
    double boundPrefillSeconds =
        costModel.prefillSeconds(sel.promptTokens - cached, cached, sel.slowdown[bound]);
    double boundPrefill = recomputeWeight * boundPrefillSeconds;
    double boundCost = sel.queue[bound] - sel.plugin[bound] + boundPrefill;
    int c = sel.candidate;
    double candidateCost = sel.cost[c];
    // What the session's cache is worth here: the prefill it saves against the candidate.
    double saved = Math.max(0, recomputeWeight * sel.prefill[c] - boundPrefill);
    // Within the affinity budget the session stays, whatever its cache saves.
    double boundTtft = sel.queue[bound] + boundPrefillSeconds;
    double budgetSeconds = budget.seconds();
    boolean withinBudget = budgetSeconds > 0 && boundTtft <= budgetSeconds;
    double threshold = repinSlackSeconds + repinSavingsMultiple * saved;
    // A move recomputes the context on the fleet's time: only onto a replica with room to spare;
    // when every replica queues, moving just adds the recompute to another queue.
    if (!withinBudget && boundCost > candidateCost + threshold
        && sel.queue[c] <= repinSlackSeconds) {
      return RepinCause.REPLICA_OVERLOADED;
    }
    return limits.admit(sel, bound) ? null : RepinCause.REPLICA_AT_LIMIT;
  }
}
