package io.affinityrouter.core;

import io.affinityrouter.PrefixCacheEvents;
import io.affinityrouter.PromptKind;
import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.LoadExchange;
import java.time.InstantSource;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The router: {@code select} runs the request through five stages, each owning its state:
 * {@link Classify} (what the request is, which replicas can take it), {@link Score} (each
 * replica's cost in seconds of estimated TTFT), {@link Pick} (the candidate, admitted),
 * {@link Pinning} (the session's binding in the store) and {@link Decide} (the lease and the
 * decision); with fleet-wide limits, {@link FleetGate} last. See {@link AffinityRouter} for the
 * options.
 *
 * <p>Lock-free on the common path: per-replica counters are atomics, the prefix index locks one
 * segment per write, per-decision arrays are per-thread scratch.
 */
final class DefaultRouter implements Router {
  private final BindingStore store;
  private final boolean ownsStore;
  final PrefixIndex index;
  private final BlockHasher hasher;
  private final LoadTracker tracker;
  private final IndexedCacheEvents events;
  private final Listeners listeners;
  private final Classify classify;
  private final Score score;
  private final Pick pick;
  private final Pinning pinning;
  private final Decide decide;
  private final FleetGate fleetGate;
  private final ThreadLocal<Selection.Scratch> scratch;
  private final int topK;
  private final AtomicBoolean closed = new AtomicBoolean();

  DefaultRouter(RouterSettings b, BindingStore store, boolean ownsStore) {
    InstantSource clock = b.clock;
    this.store = store;
    this.ownsStore = ownsStore;
    this.hasher = new BlockHasher(b.tokenBlockSize, b.textBlockChars, b.maxPromptBlocks, b.hashSeed);
    this.index = new PrefixIndex(b.prefixIndexEntries, clock::millis);
    this.tracker = new LoadTracker(PrefixIndex.MAX_ORDINALS - 1, clock);
    this.events = new IndexedCacheEvents(index, hasher, id -> tracker.state(id).ordinal(),
        b.prefixIndexEntries);
    this.listeners = new Listeners(b.listeners);
    CostModel costModel = new CostModel(b.engineProfile);
    TopKPicker picker = new TopKPicker(b.topK, TopKPicker.EPSILON_SECONDS,
        TopKPicker.EPSILON_FRACTION, b.rampUp.toMillis(), b.minRampWeight);
    this.topK = picker.k();
    Limits limits = new Limits(b.maxInFlightRequests, b.maxInFlightTokens);
    AffinityBudget budget = new AffinityBudget(b.affinityBudgetQuantile);
    long writer = writerId(b.routerId);
    LoadExchange exchange = b.loadExchange != null ? b.loadExchange
        : b.storeLoadExchange ? store.sharedLoadExchange().orElse(null) : null;
    LoadSharing sharing = exchange == null ? null : new LoadSharing(exchange,
        b.routerId != null ? b.routerId : "router-" + Long.toHexString(writer),
        b.loadExchangeInterval.toMillis(), tracker, listeners);
    this.classify = new Classify(tracker, hasher, limits, b.filters, listeners);
    this.score = new Score(index, tracker, costModel, picker, budget, b.recomputeWeight,
        b.scorers, sharing, listeners, clock);
    this.pick = new Pick(picker, limits, budget, b.holderSavingsMultiple, Pick.PLACEMENT_BLOCKS,
        b.random, clock);
    this.decide = new Decide(tracker, index, costModel, b.atLimitRetryAfter, b.unavailableRetryAfter, Decide.WAKE_THRESHOLD, clock, listeners,
        b.fleetLimits == null);
    this.fleetGate = b.fleetLimits == null ? null : new FleetGate(b.fleetLimits,
        b.fleetLeaseTime, b.storeTimeout, limits, b.atLimitRetryAfter, listeners);
    StoreClient storeClient = new StoreClient(store, b.bindingTtl, b.storeTimeout,
        new StoreGuard(clock, b.storeBackoff.toMillis(), b.storeMaxBackoff.toMillis()),
        listeners);
    RepinPolicy policy = new RepinPolicy(costModel, budget, limits, b.recomputeWeight,
        RepinPolicy.SAVINGS_MULTIPLE, RepinPolicy.SLACK_SECONDS);
    this.pinning = new Pinning(storeClient, writer, score, policy, limits, hasher,
        decide, listeners, b.rememberedSessions, b.bindingTtl, clock);
    this.scratch = ThreadLocal.withInitial(this::newScratch);
  }

  /**
   * This router's id in the session contexts it writes: its load-exchange id's hash when it has
   * one, else random (unique among a fleet's routers with overwhelming odds); never 0.
   */
  private static long writerId(String routerId) {
    long id = routerId != null ? Rendezvous.keyHash(routerId)
        : java.util.concurrent.ThreadLocalRandom.current().nextLong();
    return id == 0 ? 1 : id;
  }

  @Override
  public RoutingDecision select(RoutingRequest request, List<Replica> replicas) {
    long start = listeners.isEmpty() ? 0 : System.nanoTime();
    Outcome o = route(request, replicas, start);
    return fleetGate == null ? o.join()
        : fleetGate.gate(request, o, start).toCompletableFuture().join();
  }

  @Override
  public CompletionStage<RoutingDecision> selectAsync(RoutingRequest request,
      List<Replica> replicas) {
    long start = listeners.isEmpty() ? 0 : System.nanoTime();
    Outcome o = route(request, replicas, start);
    return fleetGate == null ? o.stage() : fleetGate.gate(request, o, start);
  }

  private Outcome route(RoutingRequest request, List<Replica> replicas, long start) {
    Objects.requireNonNull(request, "request");
    Objects.requireNonNull(replicas, "replicas");
    Selection.Scratch s = scratch.get();
    if (s.busy) { // re-entered from a listener or plugin on this thread: use fresh scratch
      s = newScratch();
    }
    s.busy = true;
    try {
      return route(request, replicas, start, s);
    } finally {
      s.busy = false;
    }
  }

  private Selection.Scratch newScratch() {
    return new Selection.Scratch(hasher.maxPromptBlocks(), PrefixIndex.MAX_ORDINALS, topK);
  }

  /** classify, score, pick, pin, decide. */
  private Outcome route(RoutingRequest request, List<Replica> replicas, long start,
      Selection.Scratch s) {
    s.ensure(replicas.size());
    String model = request.model().orElse(null);
    int expected = request.expectedOutputTokens() > 0
        ? request.expectedOutputTokens()
        : (int) Math.round(tracker.outputTokensPerRequest());
    Selection sel = s.selection.reset(request, replicas, start, model, expected,
        hasher.tokensPerBlock(request), s);
    classify.run(sel, s);
    if (!sel.anyUsableOrAtLimit()) {
      return sel.decided(decide.notRouted(sel));
    }
    score.run(sel, s);
    sel.key = Classify.key(sel);
    int preferred = sel.key == null ? -1 : pinning.reconcileTarget(sel);
    sel.candidate = preferred >= 0 ? preferred : pick.run(sel, s);
    if (sel.candidate < 0) {
      // No replica takes new work; a session bound to a draining one still goes there.
      return sel.key != null && sel.any(Selection.DRAINING)
          ? pinning.boundOnly(sel) : sel.decided(decide.notRouted(sel));
    }
    decide.wakeIfBusy(sel);
    if (sel.key == null) {
      return sel.decided(decide.best(sel, sel.candidate));
    }
    return pinning.run(sel);
  }

  @Override
  public RoutingRequest prehash(RoutingRequest request) {
    Objects.requireNonNull(request, "request");
    if (request.promptKind() == PromptKind.BLOCK_HASHES) {
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
