package io.affinityrouter.core;

import io.affinityrouter.PrefixCacheEvents;
import io.affinityrouter.PromptKind;
import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.LoadExchange;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * The router: {@code select} runs the request through five stages, each owning its state:
 * {@link Classify} (what the request is, which replicas can take it), {@link Score} (each
 * replica's cost in seconds of estimated TTFT), {@link Pick} (the candidate, admitted),
 * {@link Pinning} (the session's binding in the store) and {@link Decide} (the lease and the
 * decision); with fleet-wide limits, {@link FleetGate} last. See {@link AffinityRouter} for the
 * options.
 *
 * <p>Short locks on the common path, none shared by the whole router: per-replica counters are
 * atomics, the prefix index write-locks one segment per recorded block, a replica's queue estimate
 * takes its own stamped lock, per-decision arrays are per-thread scratch.
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
  private final @Nullable FleetGate fleetGate;
  private final ThreadLocal<Selection.Scratch> scratch;
  private final int topK;
  private final CostModel costModel;
  private final @Nullable AdmissionQueue admission; // null: nothing is held
  private final double holdWaitSeconds;
  private final AtomicBoolean closed = new AtomicBoolean();

  /**
   * Estimated queue seconds ahead of a new request on the cheapest replica past which it is held:
   * {@value}.
   */
  static final double HOLD_WAIT_SECONDS = 3.0;
  /**
   * Queued seconds beyond the running sequences past which new work waits on a thrashing replica
   * ({@link #thrashing}): a queue of a few short prefills.
   */
  static final double THRASH_WAIT_SECONDS = 0.15;
  /**
   * The median share of its session's last prompt a returning turn keeps below which there is no
   * context worth protecting from new work ({@link #thrashing}): {@value}.
   */
  static final double MIN_REUSE_SHARE = 0.5;

  /**
   * What a stage returns for "hold this request": never returned to a caller, compared by
   * identity.
   */
  static final RoutingDecision HELD =
      RoutingDecision.notRouted(RoutingReason.ALL_AT_LIMIT, Duration.ZERO);

  DefaultRouter(RouterSettings b, BindingStore store, boolean ownsStore) {
    InstantSource clock = b.clock;
    this.store = store;
    this.ownsStore = ownsStore;
    this.hasher = new BlockHasher(b.tokenBlockSize, b.textBlockChars, b.maxPromptBlocks, b.hashSeed);
    this.index = new PrefixIndex(b.prefixIndexEntries, clock::millis);
    this.tracker = new LoadTracker(PrefixIndex.MAX_ORDINALS - 1, b.replicaIdleTimeout.toMillis(),
        clock, b.executor);
    tracker.onClearOrdinal(index::removeAll);
    this.events = new IndexedCacheEvents(index, hasher,
        id -> tracker.used(id, clock.millis()).eventsKey(), b.prefixIndexEntries);
    this.listeners = new Listeners(b.listeners);
    CostModel costModel = new CostModel(b.engineProfile);
    this.costModel = costModel;
    this.holdWaitSeconds = b.holdWaitSeconds;
    this.admission = b.maxHeldRequests == 0 ? null : new AdmissionQueue(b.maxHeldRequests,
        b.maxHeldBytes, b.maxHold, b.atLimitRetryAfter, clock,
        b.holdScheduler != null ? () -> b.holdScheduler : HoldScheduler::shared, listeners);
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
    this.classify = new Classify(tracker, hasher, limits, b.filters, listeners,
        b.maxHeldRequests > 0);
    this.score = new Score(index, tracker, costModel, picker, budget, b.recomputeWeight,
        b.scorers, sharing, listeners, clock);
    this.pick = new Pick(picker, limits, budget, b.holderSavingsMultiple, Pick.PLACEMENT_BLOCKS,
        b.random, clock, costModel, tracker);
    this.decide = new Decide(tracker, index, costModel, b.atLimitRetryAfter, b.unavailableRetryAfter, Decide.WAKE_THRESHOLD, clock, listeners,
        b.fleetLimits == null);
    this.fleetGate = b.fleetLimits == null ? null : new FleetGate(b.fleetLimits,
        b.fleetLeaseTime, b.storeTimeout, limits, b.atLimitRetryAfter, listeners);
    StoreClient storeClient = new StoreClient(store, b.bindingTtl, b.storeTimeout,
        new StoreGuard(clock, b.storeBackoff.toMillis(), b.storeMaxBackoff.toMillis()),
        listeners, costModel);
    RepinPolicy policy = new RepinPolicy(costModel, budget, limits, b.recomputeWeight,
        RepinPolicy.SAVINGS_MULTIPLE, RepinPolicy.SLACK_SECONDS);
    this.pinning = new Pinning(storeClient, writer, score, policy, limits, hasher,
        decide, listeners, b.rememberedSessions, b.bindingTtl, clock, admission != null,
        tracker.returnIntervals());
    this.scratch = ThreadLocal.withInitial(this::newScratch);
    if (admission != null) {
      admission.offerWith(this::offer);
      tracker.onFreed(admission::signal);
    }
  }

  /**
   * This router's id in the session contexts it writes: its load-exchange id's hash when it has
   * one, else random (unique among a fleet's routers with overwhelming odds); never 0.
   */
  private static long writerId(@Nullable String routerId) {
    long id = routerId != null ? Rendezvous.keyHash(routerId)
        : java.util.concurrent.ThreadLocalRandom.current().nextLong();
    return id == 0 ? 1 : id;
  }

  @Override
  public RoutingDecision select(RoutingRequest request, List<Replica> replicas) {
    long start = listeners.isEmpty() ? 0 : System.nanoTime();
    Outcome o = route(request, replicas, start);
    RoutingDecision d = fleetGate == null ? o.join()
        : fleetGate.gate(request, o, start).toCompletableFuture().join();
    return d == HELD ? awaitHeld(hold(request, replicas, start).toCompletableFuture()) : d;
  }

  /**
   * Waits for a held request on the caller's thread. An interrupted caller leaves the queue and
   * gets the refusal its deadline would have given (its interrupt status kept), unless it was
   * admitted first: then the admission, whose lease the caller must close.
   */
  private RoutingDecision awaitHeld(CompletableFuture<RoutingDecision> held) {
    try {
      return held.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return held.cancel(false) ? Objects.requireNonNull(admission, "holding").refusal()
          : held.join();
    } catch (ExecutionException e) {
      throw new CompletionException(e.getCause());
    }
  }

  @Override
  public CompletionStage<RoutingDecision> selectAsync(RoutingRequest request,
      List<Replica> replicas) {
    long start = listeners.isEmpty() ? 0 : System.nanoTime();
    Outcome o = route(request, replicas, start);
    CompletionStage<RoutingDecision> stage =
        fleetGate == null ? o.stage() : fleetGate.gate(request, o, start);
    if (admission == null) {
      return stage;
    }
    CompletableFuture<RoutingDecision> f = stage.toCompletableFuture();
    if (f.isDone() && !f.isCompletedExceptionally()) {
      return f.join() == HELD ? hold(request, replicas, start) : f;
    }
    return f.thenCompose(d -> d == HELD ? hold(request, replicas, start)
        : CompletableFuture.completedFuture(d));
  }

  /** Holds the request (its prompt reduced to hashes) until there is room, or its deadline. */
  private CompletionStage<RoutingDecision> hold(RoutingRequest request, List<Replica> replicas,
      long start) {
    RoutingRequest hashed = prehash(request);
    int expected = hashed.expectedOutputTokens() > 0 ? hashed.expectedOutputTokens()
        : (int) Math.round(tracker.outputTokensPerRequest());
    // a session this router knows is a returning turn (it was routed here, or its binding read)
    BindingKey key = Classify.key(hashed);
    boolean returning = key != null && pinning.knows(key);
    return Objects.requireNonNull(admission, "holding").hold(hashed, List.copyOf(replicas),
        (long) hashed.promptTokenCount() + expected, start == 0 ? System.nanoTime() : start,
        returning);
  }

  /** Routes a held request again, against the newest replica snapshots seen since it was held. */
  private CompletionStage<RoutingDecision> offer(AdmissionQueue.Held h) {
    List<Replica> held = h.replicas;
    Replica[] fresh = new Replica[held.size()];
    for (int i = 0; i < fresh.length; i++) {
      Replica r = held.get(i);
      fresh[i] = tracker.state(r.id()).latest(r);
    }
    List<Replica> replicas = Arrays.asList(fresh);
    long start = listeners.isEmpty() ? 0 : h.startNanos;
    Outcome o = route(h.request, replicas, start);
    return fleetGate == null ? o.stage() : fleetGate.gate(h.request, o, start);
  }

  @Override
  public int heldRequests() {
    return admission == null ? 0 : admission.size();
  }

  @Override
  public void refresh(List<Replica> replicas) {
    Objects.requireNonNull(replicas, "replicas");
    long now = tracker.nowMillis();
    for (Replica r : replicas) {
      tracker.used(r.id(), now).seen(r);
    }
    tracker.maybeSweep(now);
    if (admission != null) {
      admission.signal();
    }
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
      s.selection.reservations.releaseLeftovers(s.selection); // a stage that threw
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
    sel.key = Classify.key(request);
    int preferred = sel.key == null ? -1 : pinning.reconcileTarget(sel);
    sel.candidate = preferred >= 0 ? preferred
        : pick.run(sel, s, sel.key != null && !pinning.knows(sel.key));
    if (sel.candidate < 0) {
      // No replica takes new work; a session bound to a draining one still goes there.
      if (sel.key != null && sel.any(Selection.DRAINING)) {
        return pinning.boundOnly(sel);
      }
      return sel.decided(admission != null && sel.any(Selection.AT_LIMIT) ? HELD
          : decide.notRouted(sel));
    }
    decide.wakeIfBusy(sel);
    // saturated() first: an uncongested decision never looks the session up twice
    if (admission != null && saturated(sel) && (sel.key == null || !pinning.knows(sel.key))) {
      return sel.key == null ? held(sel)
          : pinning.runUnlessNew(sel); // another router may have routed its last turn
    }
    if (sel.key == null) {
      return sel.decided(decide.best(sel, sel.candidate));
    }
    return pinning.run(sel);
  }

  /** Holds the request: the candidate's reservation is given back until it is offered again. */
  static Outcome held(Selection sel) {
    sel.reservations.release(sel, sel.candidate);
    return sel.decided(HELD);
  }

  /**
   * Whether even the candidate, the cheapest replica, has more work queued ahead of a new request
   * than the hold threshold: its estimated queue without the running sequences' term (the
   * sessions a replica holds are not work waiting), the KV-wait term included.
   */
  private boolean saturated(Selection sel) {
    int c = sel.candidate;
    double running = costModel.runningSeconds(
        CostModel.running(sel.replicas.get(c).load(), sel.states[c]));
    double beyond = sel.queue[c] - running;
    return beyond > holdWaitSeconds || beyond > THRASH_WAIT_SECONDS && thrashing(sel, c);
  }

  /**
   * Whether replica {@code c}'s cache turns over faster than sessions come back: its free KV
   * ({@link ReplicaState#heldTokens}) over the rate it is written (the engine's counter, else this
   * router's own writes) is shorter than the median return interval, so a new session's context
   * would evict those of sessions about to return.
   */
  private boolean thrashing(Selection sel, int c) {
    double back = pinning.returnSeconds();
    if (back <= 0 || pinning.reuseShare() < MIN_REUSE_SHARE) {
      return false;
    }
    double lifetime = Score.lifetimeSeconds(sel.replicas.get(c).load(), sel.states[c],
        tracker.nowMillis());
    return lifetime < back; // NaN (capacity unknown): false
  }

  @Override
  public boolean retire(String replicaId) {
    return tracker.retire(Objects.requireNonNull(replicaId, "replicaId"));
  }

  LoadTracker tracker() {
    return tracker;
  }

  /** Replicas this router keeps state for: the live ones, retired ones excluded. */
  int trackedReplicas() {
    return tracker.states().size();
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
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    if (admission != null) {
      admission.close();
    }
    if (ownsStore) {
      store.close();
    }
  }
}
