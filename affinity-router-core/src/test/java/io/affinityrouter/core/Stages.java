package io.affinityrouter.core;

import io.affinityrouter.Replica;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import java.time.Duration;
import java.util.List;

/**
 * The stages of {@code select} wired as the router wires them, over a selection built by hand: a
 * test sets each replica's status and cost terms and runs one stage on it.
 */
final class Stages {
  static final String MODEL = "m";

  final TestClock clock = new TestClock();
  final LoadTracker tracker = new LoadTracker(64, clock);
  final PrefixIndex index = new PrefixIndex(1 << 16);
  final CostModel costModel = new CostModel(EngineProfile.QWEN2_5_7B_H100);
  final Limits limits;
  final AffinityBudget budget;
  final TopKPicker picker = new TopKPicker(1, TopKPicker.EPSILON_SECONDS,
      TopKPicker.EPSILON_FRACTION, 0, 1);
  final Listeners listeners = new Listeners(List.of());
  final BlockHasher hasher = new BlockHasher(16, 64, 8192, 0);
  final Selection.Scratch scratch = new Selection.Scratch(8192, PrefixIndex.MAX_ORDINALS, 1);

  /** Stages with the router's default limits (none) and the affinity budget off. */
  Stages() {
    this(Integer.MAX_VALUE, 0);
  }

  Stages(int maxRequests, double budgetQuantile) {
    this.limits = new Limits(maxRequests, Long.MAX_VALUE);
    this.budget = new AffinityBudget(budgetQuantile);
  }

  RepinPolicy repinPolicy() {
    return new RepinPolicy(costModel, budget, limits, Score.RECOMPUTE_WEIGHT,
        RepinPolicy.SAVINGS_MULTIPLE, RepinPolicy.SLACK_SECONDS);
  }

  Pick pick() {
    return new Pick(picker, limits, budget, Pick.HOLDER_SAVINGS_MULTIPLE, Pick.PLACEMENT_BLOCKS,
        new java.util.SplittableRandom(7), clock, costModel, tracker);
  }

  Decide decide() {
    return new Decide(tracker, index, costModel, Duration.ofSeconds(1), Duration.ofSeconds(5),
        Decide.WAKE_THRESHOLD, clock, listeners, true);
  }

  Pinning pinning(BindingStore store, boolean holding) {
    Score score = new Score(index, tracker, costModel, picker, budget, Score.RECOMPUTE_WEIGHT,
        List.of(), null, listeners, clock);
    StoreClient client = new StoreClient(store, Duration.ofHours(1), Duration.ofSeconds(5),
        new StoreGuard(clock, 500, 10_000), listeners, costModel);
    return new Pinning(client, 42, score, repinPolicy(), limits, hasher, decide(), listeners,
        1_000, Duration.ofHours(1), clock, holding);
  }

  /**
   * A selection over {@code replicas} for a prompt of {@code promptTokens}, every replica OK and
   * idle, nothing matched, prefill as the cost model has it for the whole prompt; the session is
   * {@code sessionId} (null: none).
   */
  Selection selection(List<Replica> replicas, int promptTokens, @org.jspecify.annotations.Nullable
      String sessionId) {
    int[] tokens = new int[promptTokens];
    for (int i = 0; i < tokens.length; i++) {
      tokens[i] = i + 1;
    }
    RoutingRequest.Builder rb = RoutingRequest.builder().promptTokens(tokens).model(MODEL)
        .expectedOutputTokens(100);
    if (sessionId != null) {
      rb.sessionId(sessionId);
    }
    RoutingRequest request = rb.build();
    scratch.ensure(replicas.size());
    Selection sel = scratch.selection.reset(request, replicas, 0, MODEL, 100, 16, scratch);
    sel.blocks = hasher.hash(request, sel.hashes);
    double prefill = costModel.prefillSeconds(promptTokens, 0, 1.0);
    for (int i = 0; i < replicas.size(); i++) {
      sel.states[i] = tracker.used(replicas.get(i).id(), clock.millis());
      sel.status[i] = Selection.OK;
      sel.matched[i] = 0;
      sel.queue[i] = 0;
      sel.prefill[i] = prefill;
      sel.plugin[i] = 0;
      sel.slowdown[i] = 1.0;
      sel.cost[i] = prefill;
      scratch.ramp[i] = 1.0;
      scratch.idHash[i] = sel.states[i].idHash();
    }
    if (sessionId != null) {
      sel.key = new BindingKey(MODEL, "", sessionId);
    }
    return sel;
  }

  /** Sets replica {@code i}'s queue ahead of the request, seconds, and its cost to match. */
  static void queue(Selection sel, int i, double seconds) {
    sel.queue[i] = seconds;
    sel.cost[i] = seconds + sel.prefill[i];
  }

  /** Replica {@code i} holds {@code blocks} of the prompt; its prefill and cost shrink to match. */
  void matched(Selection sel, int i, int blocks) {
    sel.matched[i] = blocks;
    long cached = sel.cachedTokens(i);
    sel.prefill[i] = costModel.prefillSeconds(sel.promptTokens - cached, cached, 1.0);
    sel.cost[i] = sel.queue[i] + sel.prefill[i];
  }
}
