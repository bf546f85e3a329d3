package io.affinityrouter.core;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.affinityrouter.ModelState;
import io.affinityrouter.PrefixCacheEvents;
import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.LoadExchange;
import io.affinityrouter.spi.ReplicaFilter;
import io.affinityrouter.spi.ReplicaScorer;
import io.affinityrouter.spi.RoutingListener;
import java.time.Duration;
import java.time.InstantSource;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;

/**
 * The router: scores replicas, picks a candidate, then runs the pinning protocol
 * ({@link Pinning}) for requests with a session. See {@link AffinityRouter} for the options.
 *
 * <p>Lock-free on the common path: per-replica counters are atomics, the prefix index locks one
 * segment per write, per-decision arrays are per-thread scratch.
 */
final class DefaultRouter implements Router {
  /** Decisions after which the affinity budget's histogram weighs old ones half: {@value}. */
  static final int BUDGET_HALF_LIFE = 4096;
  /** Decisions before the affinity budget applies: {@value}. */
  static final int BUDGET_WARM_UP = 256;

  final BindingStore store;
  private final boolean ownsStore;
  final Duration bindingTtl;
  final long storeTimeoutNanos;
  final StoreGuard guard;
  final InstantSource clock;
  private final RandomGenerator random;
  final BlockHasher hasher;
  final PrefixIndex index;
  private final IndexedCacheEvents events;
  final LoadTracker tracker;
  final CostModel costModel;
  private final TopKPicker picker;
  private final int placementBlocks;
  private final int defaultMaxRequests;
  private final long defaultMaxTokens;
  final double affinityCachedFraction;
  final double recomputeWeight;
  final double repinSavingsMultiple;
  final double repinSlackSeconds;
  private final Duration atLimitRetryAfter;
  private final Duration unavailableRetryAfter;
  private final double wakeThresholdSeconds;
  private final DecayingQuantile bestPrefill;
  private final double holderSavingsMultiple;
  private final ReplicaScorer[] scorers;
  private final ReplicaFilter[] filters;
  final RoutingListener[] listeners;
  final Cache<BindingKey, String> degradedSessions;
  final Cache<BindingKey, String> lastKnown;
  private final Cache<String, Boolean> recentWakes;
  private final ThreadLocal<Selection.Scratch> scratch;
  private final Pinning pinning;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final LoadExchange loadExchange;
  private final String routerId;
  private final long loadExchangeMillis;
  private final AtomicLong nextExchangeMillis = new AtomicLong(Long.MIN_VALUE);

  DefaultRouter(AffinityRouter.Builder b, BindingStore store, boolean ownsStore) {
    this.store = store;
    this.ownsStore = ownsStore;
    this.bindingTtl = b.bindingTtl;
    this.storeTimeoutNanos = b.storeTimeout.toNanos();
    this.clock = b.clock;
    this.guard = new StoreGuard(clock, b.storeBackoff.toMillis(), b.storeMaxBackoff.toMillis());
    this.random = b.random;
    this.hasher = new BlockHasher(b.tokenBlockSize, b.textBlockChars, b.maxPromptBlocks, b.hashSeed);
    this.index = new PrefixIndex(b.prefixIndexEntries, clock::millis);
    this.tracker = new LoadTracker(PrefixIndex.MAX_ORDINALS - 1, clock);
    this.events = new IndexedCacheEvents(index, hasher, id -> {
      ReplicaState state = tracker.state(id);
      state.markCacheEvents();
      return state.ordinal();
    }, b.prefixIndexEntries);
    this.costModel = new CostModel(b.prefillTokensPerSecond, b.batchSlowdownSequences,
        b.attentionSeconds, b.runningSequenceSeconds);
    this.picker = new TopKPicker(b.topK, b.epsilonSeconds, b.epsilonFraction, b.rampUp.toMillis(),
        b.minRampWeight);
    this.placementBlocks = b.placementBlocks;
    this.defaultMaxRequests = b.maxInFlightRequests;
    this.defaultMaxTokens = b.maxInFlightTokens;
    this.affinityCachedFraction = b.affinityCachedFraction;
    this.recomputeWeight = b.recomputeWeight;
    this.repinSavingsMultiple = b.repinSavingsMultiple;
    this.repinSlackSeconds = b.repinSlack.toNanos() / 1e9;
    this.atLimitRetryAfter = b.atLimitRetryAfter;
    this.unavailableRetryAfter = b.unavailableRetryAfter;
    this.wakeThresholdSeconds = b.wakeThreshold.toNanos() / 1e9;
    this.bestPrefill = b.affinityBudgetQuantile > 0
        ? new DecayingQuantile(b.affinityBudgetQuantile, BUDGET_HALF_LIFE, BUDGET_WARM_UP) : null;
    this.holderSavingsMultiple = b.holderSavingsMultiple;
    this.loadExchange = b.loadExchange;
    this.routerId = b.routerId;
    this.loadExchangeMillis = b.loadExchangeInterval.toMillis();
    this.scorers = b.scorers.toArray(new ReplicaScorer[0]);
    this.filters = b.filters.toArray(new ReplicaFilter[0]);
    this.listeners = b.listeners.toArray(new RoutingListener[0]);
    this.lastKnown = Caffeine.newBuilder().maximumSize(b.rememberedSessions)
        .expireAfterAccess(bindingTtl).ticker(() -> clock.millis() * 1_000_000L)
        .executor(Runnable::run).build();
    this.degradedSessions = Caffeine.newBuilder().maximumSize(b.rememberedSessions)
        .expireAfterWrite(bindingTtl).ticker(() -> clock.millis() * 1_000_000L)
        .executor(Runnable::run).build();
    this.recentWakes = Caffeine.newBuilder().maximumSize(10_000)
        .expireAfterWrite(unavailableRetryAfter).ticker(() -> clock.millis() * 1_000_000L)
        .executor(Runnable::run).build();
    this.scratch = ThreadLocal.withInitial(this::newScratch);
    this.pinning = new Pinning(this);
  }

  @Override
  public RoutingDecision select(RoutingRequest request, List<Replica> replicas) {
    Object outcome = begin(request, replicas);
    if (outcome instanceof RoutingDecision) {
      return (RoutingDecision) outcome;
    }
    @SuppressWarnings("unchecked")
    CompletionStage<RoutingDecision> stage = (CompletionStage<RoutingDecision>) outcome;
    return stage.toCompletableFuture().join();
  }

  @Override
  public CompletionStage<RoutingDecision> selectAsync(RoutingRequest request,
      List<Replica> replicas) {
    Object outcome = begin(request, replicas);
    if (outcome instanceof RoutingDecision) {
      return CompletableFuture.completedFuture((RoutingDecision) outcome);
    }
    @SuppressWarnings("unchecked")
    CompletionStage<RoutingDecision> stage = (CompletionStage<RoutingDecision>) outcome;
    return stage;
  }

  /** Returns a finished {@link RoutingDecision}, or a stage when the binding store is involved. */
  private Object begin(RoutingRequest request, List<Replica> replicas) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(replicas, "replicas");
    long start = listeners.length == 0 ? 0 : System.nanoTime();
    Selection.Scratch s = scratch.get();
    if (s.busy) { // re-entered from a listener or plugin on this thread: use fresh scratch
      s = newScratch();
    }
    s.busy = true;
    try {
      return begin(request, replicas, start, s);
    } finally {
      s.busy = false;
    }
  }

  private Selection.Scratch newScratch() {
    return new Selection.Scratch(hasher.maxPromptBlocks(), PrefixIndex.MAX_ORDINALS,
        picker.k());
  }

  private Object begin(RoutingRequest request, List<Replica> replicas, long start,
      Selection.Scratch s) {
    int n = replicas.size();
    s.ensure(n);
    String model = request.model().orElse(null);
    int expected = request.expectedOutputTokens() > 0
        ? request.expectedOutputTokens()
        : (int) Math.round(tracker.outputTokensPerRequest());
    Selection sel = s.selection.reset(request, replicas, start, model, expected,
        hasher.tokensPerBlock(request), s);
    classify(sel, s);
    if (request.promptKind() == io.affinityrouter.PromptKind.BLOCK_HASHES) {
      sel.hashes = request.promptBlockHashes();
      sel.blocks = Math.min(sel.hashes.length, hasher.maxPromptBlocks());
    } else {
      sel.blocks = hasher.hash(request, s.hashes);
    }
    boolean anyUsable = false;
    for (int i = 0; i < n && !anyUsable; i++) {
      anyUsable = sel.usable(i) || sel.status[i] == Selection.AT_LIMIT;
    }
    if (!anyUsable) {
      return notRouted(sel);
    }
    score(sel, s);
    if (request.sessionId().isPresent()) {
      sel.key = new BindingKey(model == null ? "" : model, request.tenant().orElse(""),
          request.sessionId().get());
    }
    int preferred = sel.key == null ? -1 : reconcileTarget(sel);
    sel.candidate = preferred >= 0 ? preferred : pickAndAdmit(sel, s);
    if (sel.candidate < 0) {
      return notRouted(sel);
    }
    if (sel.queue[sel.candidate] >= wakeThresholdSeconds && sel.anyAsleep()) {
      wake(sel); // the awake replicas are busy: ask for the sleeping capacity, route as usual
    }
    if (sel.key == null) {
      return routed(sel, sel.candidate, RoutingReason.BEST_SCORE, 0, false, null, null, false,
          false);
    }
    return pinning.run(sel);
  }

  private void classify(Selection sel, Selection.Scratch s) {
    RoutingRequest request = sel.request;
    List<Replica> replicas = sel.replicas;
    long epoch = ++s.epoch;
    Set<String> overflowIds = null;
    for (int i = 0; i < sel.size; i++) {
      Replica r = replicas.get(i);
      ReplicaState state = tracker.state(r.id());
      int ord = state.ordinal();
      if (ord >= 0) {
        if (s.seenEpoch[ord] == epoch) {
          throw new IllegalArgumentException("replicas: duplicate id " + r.id());
        }
        s.seenEpoch[ord] = epoch;
      } else {
        if (overflowIds == null) {
          overflowIds = new HashSet<>();
        }
        if (!overflowIds.add(r.id())) {
          throw new IllegalArgumentException("replicas: duplicate id " + r.id());
        }
      }
      s.states[i] = state;
      s.status[i] = status(request, r, state, sel);
    }
  }

  private byte status(RoutingRequest request, Replica r, ReplicaState state, Selection sel) {
    if (r.health() == ReplicaHealth.UNHEALTHY) {
      return Selection.UNHEALTHY;
    }
    ModelState ms = modelState(r, sel.model);
    if (ms == null) {
      return Selection.NO_MODEL;
    }
    if (ms == ModelState.SLEEPING) {
      return Selection.ASLEEP;
    }
    if (ms == ModelState.LOADING) {
      return Selection.LOADING;
    }
    for (ReplicaFilter f : filters) {
      boolean accepted;
      try {
        accepted = f.accepts(request, r);
      } catch (RuntimeException e) {
        notifyPluginFailure(f.name(), e);
        accepted = false;
      }
      if (!accepted) {
        return Selection.UNHEALTHY;
      }
    }
    if (!state.fits(maxRequests(r), maxTokens(r), sel.requestTokens)) {
      return Selection.AT_LIMIT;
    }
    return r.health() == ReplicaHealth.DRAINING ? Selection.DRAINING : Selection.OK;
  }

  private static ModelState modelState(Replica r, String model) {
    Map<String, ModelState> models = r.models();
    if (models.isEmpty()) {
      return ModelState.ACTIVE;
    }
    if (model != null) {
      return models.get(model);
    }
    ModelState best = null;
    for (ModelState ms : models.values()) {
      if (best == null || ms.ordinal() < best.ordinal()) {
        best = ms;
      }
    }
    return best;
  }

  int maxRequests(Replica r) {
    return r.maxInFlightRequests().isPresent()
        ? r.maxInFlightRequests().getAsInt() : defaultMaxRequests;
  }

  long maxTokens(Replica r) {
    return r.maxInFlightTokens().isPresent() ? r.maxInFlightTokens().getAsLong() : defaultMaxTokens;
  }

  private void score(Selection sel, Selection.Scratch s) {
    int count = index.match(sel.hashes, sel.blocks, s.depthByOrdinal, s.ordinals);
    long now = clock.millis();
    if (loadExchange != null) {
      maybeExchange(now);
    }
    double bestUsablePrefill = Double.POSITIVE_INFINITY;
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
      if (sel.matched[i] > 0 && !state.hasCacheEvents()) {
        sel.matched[i] = residentDepth(sel.hashes, sel.matched[i], load, state, now);
      }
      int running = CostModel.running(load, state);
      double slowdown = costModel.slowdown(running);
      sel.slowdown[i] = slowdown;
      sel.queue[i] = costModel.queueSeconds(load, state, tracker, sel.requestTokens, running,
          slowdown, now);
      long cached = sel.cachedTokens(i);
      sel.prefill[i] = costModel.prefillSeconds(sel.promptTokens - cached, cached, slowdown);
      if (st != Selection.AT_LIMIT) {
        bestUsablePrefill = Math.min(bestUsablePrefill, sel.prefill[i]);
      }
      sel.plugin[i] = pluginSeconds(sel.request, r);
      sel.cost[i] = sel.queue[i] + recomputeWeight * sel.prefill[i] - sel.plugin[i];
      s.ramp[i] = picker.rampWeight(r.readySince().toEpochMilli(), now);
      s.idHash[i] = state.idHash();
    }
    for (int j = 0; j < count; j++) {
      s.depthByOrdinal[s.ordinals[j]] = 0;
    }
    if (bestPrefill != null && bestUsablePrefill < Double.POSITIVE_INFINITY) {
      bestPrefill.record(bestUsablePrefill);
    }
  }

  /**
   * How much of a matched prefix the replica probably still holds. Its KV cache evicts the least
   * recently used blocks, so a block this router last sent there longer ago than the cache takes to
   * turn over (free capacity over the rate the cache is written) is taken as gone
   * ({@link PrefixIndex#freshDepth}). The rate is the engine's own when its load carries a write
   * counter ({@link ReplicaLoad#kvWrittenTokens()}: every gateway's traffic, and only what the
   * prefix cache did not serve), else what this router sends there. The estimate is optimistic:
   * cache hits refresh blocks without writing; KV events, when they reach the router, replace it.
   */
  private int residentDepth(long[] hashes, int depth, ReplicaLoad load, ReplicaState state,
      long now) {
    double engineRate = state.engineWrittenTokensPerSecond(now);
    double rate = engineRate > 0 ? engineRate : state.writtenTokensPerSecond(now);
    double lifetime = lifetimeSeconds(load.kvCapacityTokens(), state.inFlightTokens(), rate);
    if (Double.isNaN(lifetime) || Double.isInfinite(lifetime)) {
      return depth;
    }
    return index.freshDepth(hashes, depth, (long) Math.min(lifetime * 1000, Long.MAX_VALUE), now,
        state.ordinal());
  }

  /**
   * How long a block written to a KV cache of {@code capacity} tokens, {@code inFlight} of them held
   * by running requests, stays there when the cache is written at {@code rate} tokens per second:
   * seconds; infinite at rate 0, NaN when the capacity is unknown.
   */
  private static double lifetimeSeconds(long capacity, long inFlight, double rate) {
    if (capacity <= 0) {
      return Double.NaN;
    }
    return rate > 0 ? Math.max(0, capacity - (double) inFlight) / rate : Double.POSITIVE_INFINITY;
  }

  /** The affinity budget, seconds: within it cache wins outright (0: none yet, or turned off). */
  double budgetSeconds() {
    return bestPrefill == null ? 0 : bestPrefill.get();
  }

  private double pluginSeconds(RoutingRequest request, Replica r) {
    double total = 0;
    for (ReplicaScorer sc : scorers) {
      try {
        double v = sc.score(request, r);
        if (v >= 0 && v <= 1) {
          total += v * sc.weightSeconds();
        } else {
          notifyPluginFailure(sc.name(), new IllegalArgumentException(
              "score: " + v + " (expected: 0..1)"));
        }
      } catch (RuntimeException e) {
        notifyPluginFailure(sc.name(), e);
      }
    }
    return total;
  }

  /** Picks among OK replicas (DRAINING ones only if no OK one exists) and admits the request. */
  private int pickAndAdmit(Selection sel, Selection.Scratch s) {
    boolean anyOk = false;
    boolean anyMatch = false;
    for (int i = 0; i < sel.size; i++) {
      s.allowed[i] = sel.status[i] == Selection.OK;
      anyOk |= s.allowed[i];
      anyMatch |= s.allowed[i] && sel.matched[i] > 0;
    }
    if (!anyOk) {
      for (int i = 0; i < sel.size; i++) {
        s.allowed[i] = sel.status[i] == Selection.DRAINING;
        anyMatch |= s.allowed[i] && sel.matched[i] > 0;
      }
    }
    if (anyMatch) {
      int holder = holderWithinBudget(sel, s.allowed);
      if (holder >= 0 && admit(sel, holder)) {
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
      if (admit(sel, c)) {
        return c;
      }
      s.allowed[c] = false;
      sel.status[c] = Selection.AT_LIMIT;
    }
  }

  /**
   * Where a cold prompt (no allowed replica holds any of it) is written in full: among the
   * near-equal replicas, the one whose cache lives longest ({@link TopKPicker#longestLived}), so the
   * write evicts the oldest blocks there are. Only the engines' write counters count here, which
   * every gateway reads alike: without them the placement key's choice stands, so gateways that
   * never talk still send a new prompt family to one replica.
   */
  private int longestLived(Selection sel, Selection.Scratch s, int picked) {
    long now = clock.millis();
    for (int i = 0; i < sel.size; i++) {
      double rate = s.allowed[i] ? sel.states[i].engineWrittenTokensPerSecond(now) : 0;
      s.lifetime[i] = rate > 0 ? lifetimeSeconds(sel.replicas.get(i).load().kvCapacityTokens(),
          sel.states[i].inFlightTokens(), rate) : Double.NaN;
    }
    return picker.longestLived(picked, sel.cost, s.allowed, s.ramp, s.lifetime, sel.size);
  }

  /**
   * The allowed replica holding most of the prompt (the cheapest of equals) if its estimated TTFT is
   * within the affinity budget and its extra queue over the cheapest allowed replica is at most
   * {@code holderSavingsMultiple} × the prefill it saves; else -1.
   */
  private int holderWithinBudget(Selection sel, boolean[] allowed) {
    double budget = budgetSeconds();
    if (budget <= 0) {
      return -1;
    }
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
    if (holder < 0 || sel.queue[holder] + sel.prefill[holder] > budget) {
      return -1;
    }
    double saved = sel.prefill[cheapest] - sel.prefill[holder];
    double extra = sel.queue[holder] - sel.queue[cheapest];
    return extra <= holderSavingsMultiple * saved ? holder : -1;
  }

  /** Admits the request on replica {@code i} against its limits. */
  boolean admit(Selection sel, int i) {
    Replica r = sel.replicas.get(i);
    return sel.states[i].tryAcquire(maxRequests(r), maxTokens(r), sel.requestTokens);
  }

  /** A degraded session's replica to return to, admitted, or -1. */
  private int reconcileTarget(Selection sel) {
    if (degradedSessions.estimatedSize() == 0) {
      return -1;
    }
    String target = degradedSessions.getIfPresent(sel.key);
    if (target == null) {
      return -1;
    }
    int i = sel.indexOf(target);
    return i >= 0 && sel.usable(i) && admit(sel, i) ? i : -1;
  }

  /**
   * Opens the lease on replica {@code i}, records the prompt there, notifies, returns the decision.
   * {@code bound}: the session's existing binding was kept; {@code assumeCached}: count at least
   * {@code affinityCachedFraction} of the prompt as cached there.
   */
  RoutingDecision routed(Selection sel, int i, RoutingReason reason, long generation,
      boolean degraded, io.affinityrouter.RepinCause cause, String previous, boolean bound,
      boolean assumeCached) {
    ReplicaState state = sel.states[i];
    long cached = sel.cachedTokens(i);
    double prefillSeconds = sel.prefill[i];
    if (assumeCached) {
      long assumed = (long) (affinityCachedFraction * sel.promptTokens);
      if (assumed > cached) {
        cached = assumed;
        prefillSeconds = costModel.prefillSeconds(sel.promptTokens - cached, cached,
            sel.slowdown[i]);
      }
    }
    long uncached = sel.promptTokens - cached;
    var lease = tracker.open(state, sel.requestTokens, uncached, sel.expectedOutput,
        costModel.prefillSeconds(uncached, cached, 1.0));
    if (state.ordinal() >= 0 && sel.blocks > 0) {
      index.record(sel.hashes, sel.blocks, state.ordinal(), sel.matched[i]);
    }
    double total = sel.queue[i] + prefillSeconds - sel.plugin[i];
    var scores = new io.affinityrouter.ScoreBreakdown(bound,
        sel.promptTokens == 0 ? 0 : (double) cached / sel.promptTokens, prefillSeconds,
        sel.queue[i], sel.plugin[i], total);
    RoutingDecision d = RoutingDecision.routed(reason, sel.replicas.get(i), lease, scores,
        sel.matched[i], sel.blocks, generation, degraded, cause, previous);
    notifyDecision(sel, d);
    return d;
  }

  private RoutingDecision notRouted(Selection sel) {
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
      d = RoutingDecision.notRouted(RoutingReason.ALL_AT_LIMIT, atLimitRetryAfter, null);
    } else if (!activeHealthy && asleep) {
      String woken = wake(sel);
      d = RoutingDecision.notRouted(RoutingReason.MODEL_WAKING, unavailableRetryAfter, woken);
    } else if (loading) {
      d = RoutingDecision.notRouted(RoutingReason.MODEL_LOADING, unavailableRetryAfter, null);
    } else {
      d = RoutingDecision.notRouted(RoutingReason.NO_REPLICA, unavailableRetryAfter, null);
    }
    notifyDecision(sel, d);
    return d;
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
      for (RoutingListener l : listeners) {
        try {
          l.onWakeRequested(r, model);
        } catch (RuntimeException e) {
          // Listeners must not break routing.
        }
      }
    }
    return r.id();
  }

  private void notifyDecision(Selection sel, RoutingDecision d) {
    if (listeners.length == 0) {
      return;
    }
    long nanos = System.nanoTime() - sel.startNanos;
    for (RoutingListener l : listeners) {
      try {
        l.onDecision(sel.request, d, nanos);
      } catch (RuntimeException e) {
        // Listeners must not break routing.
      }
    }
  }

  /**
   * Publishes this router's queued prefill per replica and takes in the other routers', when the
   * exchange interval has elapsed; one decision thread wins the slot, the others go on. A failing
   * exchange keeps the last view (it drains with time) and is reported as a plugin failure.
   */
  private void maybeExchange(long now) {
    long next = nextExchangeMillis.get();
    if (now < next || !nextExchangeMillis.compareAndSet(next, now + loadExchangeMillis)) {
      return;
    }
    Map<String, Double> mine = new HashMap<>();
    for (ReplicaState state : tracker.states()) {
      double pending = state.pendingPrefillSeconds(now);
      if (pending > 0) {
        mine.put(state.id(), pending);
      }
    }
    Map<String, Double> others;
    try {
      others = Objects.requireNonNull(loadExchange.exchange(routerId, mine, now), "others");
    } catch (RuntimeException e) {
      notifyPluginFailure("loadExchange", e);
      return;
    }
    for (ReplicaState state : tracker.states()) {
      Double v = others.get(state.id());
      state.peerQueue(v == null || !(v > 0) || Double.isInfinite(v) ? 0 : v, now);
    }
  }

  private void notifyPluginFailure(String name, Throwable e) {
    for (RoutingListener l : listeners) {
      try {
        l.onPluginFailure(name, e);
      } catch (RuntimeException ignored) {
        // Listeners must not break routing.
      }
    }
  }

  @Override
  public RoutingRequest prehash(RoutingRequest request) {
    Objects.requireNonNull(request, "request");
    if (request.promptKind() == io.affinityrouter.PromptKind.BLOCK_HASHES) {
      return request;
    }
    return request.withBlockHashes(hasher.hash(request));
  }

  @Override
  public PrefixCacheEvents cacheEvents() {
    return events;
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true) && ownsStore) {
      store.close();
    }
  }
}
