package io.affinityrouter.core.lifecycle;

import io.affinityrouter.ModelState;
import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.engine.FleetView;
import io.affinityrouter.core.lifecycle.LifecycleAction.Kind;
import io.affinityrouter.core.lifecycle.LifecycleAction.Reason;
import io.affinityrouter.internal.Checks;
import io.affinityrouter.spi.LifecycleLease;
import io.affinityrouter.spi.RoutingListener;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Decides which models sleep and where they wake, from {@link ModelClaim}s, the fleet's model
 * states and the router's traffic, and carries the actions out through a {@link ModelActuator},
 * off the routing path.
 *
 * <p>A <b>copy</b> is one model on one replica (for vLLM, one engine: one model per replica). Copies
 * share the GPU memory of their <b>GPU group</b> ({@link Builder#gpuGroup}, by default the replica
 * itself): an awake copy (active or loading) takes its claim's {@link ModelClaim#gpuMemoryBytes()},
 * a sleeping one none. Each round ({@link Builder#interval}, default 1 s) the lifecycle, while it
 * holds the {@link LifecycleLease}:
 * <ol>
 *   <li>sleeps copies idle for their claim's {@link ModelClaim#idleTimeout()}, least recently used
 *       first, and copies above the claim's maximum, never a model below its minimum and never a
 *       copy woken less than {@link Builder#wakeCooldown} ago;
 *   <li>wakes copies of models below their minimum ({@code MINIMUM}), of models with requests and no
 *       awake copy ({@code DEMAND}: the router's {@link RoutingReason#MODEL_WAKING} decisions, seen
 *       through {@link #listener()}), and one more copy of a model whose requests queue (waiting
 *       requests on half or more of its awake copies, or requests refused at their limits) for
 *       {@link Builder#pressureDelay} ({@code PRESSURE}), up to the claim's maximum, the model
 *       with the most requests per awake copy first;
 *   <li>wakes a copy only on a group where it fits; where none fits, it first sleeps copies of
 *       other models ({@code MAKE_ROOM}): idle ones, least recently used first, then busy ones of
 *       the models left least loaded per copy; on the group that needs the fewest, then whose
 *       victims have the fewest requests to finish before they sleep; and wakes once they are
 *       asleep. A pressure wake never takes a model's last awake copy, a copy of a model under
 *       pressure, nor a busy copy whose model would be left with as many requests per copy as the
 *       pressed one after its wake; a demand or minimum wake may take an idle model's last copy
 *       (unused for the wake cooldown) when that model's minimum allows.
 * </ol>
 * Each copy has at most one action under way. A failed action is retried with exponential backoff
 * ({@link Builder#retryBackoff}); one the engine cannot do is not retried; one that took effect is
 * not repeated while the fleet view catches up (for up to 30 s). An action unanswered after
 * {@link Builder#actionTimeout} counts as failed.
 *
 * <p><b>Several gateways.</b> Give each gateway's lifecycle the same lease (the Redis one from the
 * redis-binding module): only the holder acts, checking its fencing token before it dispatches;
 * the others follow and take over when the holder stops renewing. Each lifecycle sees its own
 * gateway's traffic and every engine's running and waiting requests; a copy with requests running
 * there is never idle.
 *
 * <pre>{@code
 * ModelLifecycle lifecycle = ModelLifecycle.builder()
 *     .claims(claims).fleet(fleetView).gpuMemoryBytes(80L << 30).build().start();
 * Router router = AffinityRouter.builder().addListener(lifecycle.listener()).build();
 * }</pre>
 *
 * <p>Use {@link #listener()} instead of {@link FleetView#wakeListener()}, not beside it: the
 * lifecycle wakes where the model fits. Models without a claim, and replicas that list no models,
 * are left alone (their memory is not counted). Thread-safe.
 */
public final class ModelLifecycle implements AutoCloseable {
  /** Default {@link Builder#interval}: 1 s. */
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(1);
  /** Default {@link Builder#leaseTtl}: 10 s. */
  public static final Duration DEFAULT_LEASE_TTL = Duration.ofSeconds(10);
  /** Default {@link Builder#wakeCooldown}: 30 s. */
  public static final Duration DEFAULT_WAKE_COOLDOWN = Duration.ofSeconds(30);
  /** Default {@link Builder#pressureDelay}: 5 s. */
  public static final Duration DEFAULT_PRESSURE_DELAY = Duration.ofSeconds(5);
  /** Default {@link Builder#actionTimeout}: 2 minutes (a level-2 wake reloads the weights). */
  public static final Duration DEFAULT_ACTION_TIMEOUT = Duration.ofMinutes(2);
  /** How long {@link #close()} waits for the lease's release: 2 s. */
  public static final Duration RELEASE_WAIT = Duration.ofSeconds(2);
  /** Default first retry delay of {@link Builder#retryBackoff}: 1 s. */
  public static final Duration DEFAULT_INITIAL_BACKOFF = Duration.ofSeconds(1);
  /** Default longest retry delay of {@link Builder#retryBackoff}: 60 s. */
  public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(60);

  private static final long SETTLE_NANOS = TimeUnit.SECONDS.toNanos(30);
  private static final long LOG_INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(10);
  private static final System.Logger LOG = System.getLogger(ModelLifecycle.class.getName());

  private final Map<String, ModelClaim> claims;
  private final Supplier<List<Replica>> fleet;
  private final ModelActuator actuator;
  private final LifecycleLease lease;
  private final String holder;
  private final Duration leaseTtl;
  private final long intervalNanos;
  private final Function<Replica, String> gpuGroup;
  private final long defaultGroupMemory;
  private final Map<String, Long> groupMemory;
  private final long wakeCooldownNanos;
  private final long pressureDelayNanos;
  private final long actionTimeoutNanos;
  private final long initialBackoffNanos;
  private final long maxBackoffNanos;
  private final LongSupplier ticker;

  private final Map<String, Traffic> traffic = new HashMap<>();
  private final RoutingListener listener = new TrafficListener();
  private final AtomicBoolean running = new AtomicBoolean();
  private final AtomicBoolean rerun = new AtomicBoolean();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicLong lastLogNanos = new AtomicLong(Long.MIN_VALUE);

  // Guarded by this: the copies' books and the counters, touched by rounds and completions.
  private final Map<CopyKey, Book> books = new HashMap<>();
  private final Map<String, Long> pressureSince = new HashMap<>();
  private List<ModelView> lastViews = List.of();
  private boolean leader;
  private long token;
  private long actionsDone;
  private long actionsFailed;
  private long actionsUnsupported;
  private @Nullable ScheduledExecutorService scheduler;

  private ModelLifecycle(Builder b, ModelActuator actuator, Supplier<List<Replica>> fleet) {
    this.claims = b.claims;
    this.fleet = fleet;
    this.actuator = actuator;
    this.lease = b.lease;
    this.holder = b.holder;
    this.leaseTtl = b.leaseTtl;
    this.intervalNanos = b.interval.toNanos();
    this.gpuGroup = b.gpuGroup;
    this.defaultGroupMemory = b.gpuMemoryBytes;
    this.groupMemory = Map.copyOf(b.groupMemory);
    this.wakeCooldownNanos = b.wakeCooldown.toNanos();
    this.pressureDelayNanos = b.pressureDelay.toNanos();
    this.actionTimeoutNanos = b.actionTimeout.toNanos();
    this.initialBackoffNanos = b.initialBackoff.toNanos();
    this.maxBackoffNanos = b.maxBackoff.toNanos();
    this.ticker = b.ticker;
    long now = ticker.getAsLong();
    for (String model : claims.keySet()) {
      traffic.put(model, new Traffic(model, now));
    }
  }

  /** A builder. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The listener that feeds the lifecycle the router's traffic: give it to
   * {@code AffinityRouter.Builder.listener}. Per decision it records the time of the model's last
   * request and of the chosen copy's; a {@code MODEL_WAKING} or {@code NO_REPLICA} decision for a
   * claimed model, or a wake request, is demand (and starts a round at once when the lifecycle is
   * {@link #start() started}). Allocation-free once each replica has been seen.
   */
  public RoutingListener listener() {
    return listener;
  }

  /** The claims, in the order given. */
  public List<ModelClaim> claims() {
    return List.copyOf(claims.values());
  }

  /** This gateway's holder name on the lease. */
  public String holder() {
    return holder;
  }

  /**
   * Runs the rounds every {@link Builder#interval} on a daemon thread of the lifecycle's own, and
   * one at once on demand. Idempotent.
   *
   * @throws IllegalStateException if the lifecycle is closed
   */
  public synchronized ModelLifecycle start() {
    if (closed.get()) {
      throw new IllegalStateException("lifecycle: closed");
    }
    if (scheduler == null) {
      ScheduledExecutorService s = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "affinity-router-lifecycle");
        t.setDaemon(true);
        return t;
      });
      s.scheduleWithFixedDelay(this::runQuietly, 0, intervalNanos, TimeUnit.NANOSECONDS);
      scheduler = s;
    }
    return this;
  }

  /**
   * One round: takes or renews the lease, plans from the fleet as it is now and, if this gateway
   * still holds the lease, starts the actions (without waiting for their answers). A round asked for
   * while one is under way runs after it. Never completes exceptionally.
   *
   * @return the actions started (empty when not the leader or nothing to do)
   */
  public CompletionStage<List<LifecycleAction>> runOnce() {
    if (closed.get()) {
      return CompletableFuture.completedFuture(List.of());
    }
    if (!running.compareAndSet(false, true)) {
      rerun.set(true);
      return CompletableFuture.completedFuture(List.of());
    }
    CompletableFuture<List<LifecycleAction>> round;
    try {
      // Started, rounds plan on the lifecycle's thread, not on the lease store's I/O threads.
      Executor planner = plannerExecutor();
      round = lease.acquire(holder, leaseTtl).toCompletableFuture()
          .handleAsync((held, error) -> afterAcquire(held, error), planner)
          .thenCompose(Function.identity());
    } catch (RuntimeException e) {
      round = CompletableFuture.completedFuture(leaseLost(e));
    }
    return round.handle((actions, error) -> {
      running.set(false);
      if (error != null) {
        warn("lifecycle round failed", error);
      }
      if (rerun.getAndSet(false)) {
        trigger();
      }
      return actions == null ? List.<LifecycleAction>of() : actions;
    });
  }

  /** A snapshot: leadership, each claimed model's copies, actions under way, counts. */
  public synchronized LifecycleState state() {
    long now = ticker.getAsLong();
    List<LifecycleState.ModelStatus> models = new ArrayList<>();
    Map<String, ModelView> byModel = new HashMap<>();
    for (ModelView v : lastViews) {
      byModel.put(v.claim.model(), v);
    }
    for (ModelClaim claim : claims.values()) {
      ModelView v = byModel.get(claim.model());
      Traffic t = traffic.get(claim.model());
      double idle = t == null ? 0 : Math.max(0, now - t.lastRequest) / 1e9;
      models.add(new LifecycleState.ModelStatus(claim.model(), v == null ? 0 : v.awakeCount(),
          v == null ? 0 : v.asleepCount(), v == null ? 0 : v.wakingCount(), claim.minAwake(),
          claim.maxAwake(), idle));
    }
    List<LifecycleAction> inFlight = new ArrayList<>();
    for (Book book : books.values()) {
      if (book.inFlight != null) {
        inFlight.add(book.inFlight);
      }
    }
    return new LifecycleState(leader, leader ? token : 0, models, inFlight, actionsDone,
        actionsFailed, actionsUnsupported);
  }

  /**
   * Stops the rounds and gives the lease up if this gateway holds it, waiting up to
   * {@link #RELEASE_WAIT} for the store's answer so that another gateway can take over at once
   * (the caller may close the store next). Actions under way are not cancelled (their answers are
   * ignored). Neither the lease nor the actuator is closed. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    ScheduledExecutorService s;
    long held;
    synchronized (this) {
      s = scheduler;
      scheduler = null;
      held = leader ? token : 0;
      leader = false;
    }
    if (s != null) {
      s.shutdownNow();
    }
    if (held != 0) {
      try {
        lease.release(holder, held).toCompletableFuture()
            .get(RELEASE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (Exception e) {
        warn("lifecycle lease release failed; the others take over when it expires", e);
      }
    }
  }

  @Override
  public String toString() {
    return "ModelLifecycle{" + holder + ", " + claims.size() + " claims, lease " + lease + "}";
  }

  private CompletionStage<List<LifecycleAction>> afterAcquire(@Nullable OptionalLong held,
      @Nullable Throwable error) {
    if (error != null || held == null) {
      return CompletableFuture.completedFuture(leaseLost(error));
    }
    if (held.isEmpty()) {
      synchronized (this) {
        leader = false;
        token = 0;
      }
      return CompletableFuture.completedFuture(List.of());
    }
    long heldToken = held.getAsLong();
    List<LifecycleAction> planned;
    List<Replica> replicas = fleet.get();
    synchronized (this) {
      leader = true;
      token = heldToken;
      planned = plan(replicas, ticker.getAsLong());
    }
    if (planned.isEmpty()) {
      return CompletableFuture.completedFuture(List.of());
    }
    return lease.isCurrent(holder, heldToken).handle((current, e) -> {
      if (e != null) {
        leaseLost(e);
        return List.of();
      }
      return Boolean.TRUE.equals(current) ? dispatch(planned) : List.of();
    });
  }

  private List<LifecycleAction> leaseLost(@Nullable Throwable error) {
    synchronized (this) {
      leader = false;
      token = 0;
    }
    if (error != null) {
      warn("lifecycle lease unavailable; not acting", error);
    }
    return List.of();
  }

  private synchronized Executor plannerExecutor() {
    ScheduledExecutorService s = scheduler;
    return s == null ? Runnable::run : command -> {
      try {
        s.execute(command);
      } catch (RuntimeException e) {
        command.run(); // closing: finish the round here
      }
    };
  }

  private void runQuietly() {
    runOnce();
  }

  private void trigger() {
    ScheduledExecutorService s;
    synchronized (this) {
      s = scheduler;
    }
    if (s != null && !closed.get()) {
      try {
        s.execute(this::runQuietly);
      } catch (RuntimeException e) {
        // Rejected: the lifecycle is closing.
      }
    }
  }

  // ---- planning (guarded by this) ----

  private List<LifecycleAction> plan(List<Replica> replicas, long now) {
    Map<String, ModelView> models = new LinkedHashMap<>();
    for (ModelClaim claim : claims.values()) {
      models.put(claim.model(), new ModelView(claim));
    }
    Map<String, Group> groups = new HashMap<>();
    Map<CopyKey, Book> seen = new HashMap<>();
    for (Replica replica : replicas) {
      if (replica.models().isEmpty()) {
        continue;
      }
      String groupName = gpuGroup.apply(replica);
      Group group = groups.computeIfAbsent(groupName,
          g -> new Group(groupMemory.getOrDefault(g, defaultGroupMemory)));
      for (Map.Entry<String, ModelState> e : replica.models().entrySet()) {
        ModelView model = models.get(e.getKey());
        if (model == null) {
          continue;
        }
        CopyKey key = new CopyKey(replica.id(), e.getKey());
        Book book = books.computeIfAbsent(key, k -> new Book(now));
        seen.put(key, book);
        expire(book, now);
        Copy copy = new Copy(replica, group, model, book, awake(book, e.getValue(), now));
        Traffic t = traffic.get(e.getKey());
        AtomicLong last = t == null ? null : t.lastByReplica.get(replica.id());
        if (last != null) {
          book.lastUsed = Math.max(book.lastUsed, last.get());
        }
        if (copy.awake && replica.load().runningRequests() + replica.load().waitingRequests() > 0) {
          book.lastUsed = now;
        }
        model.copies.add(copy);
        group.copies.add(copy);
        if (copy.holdsMemory()) {
          group.used += model.claim.gpuMemoryBytes();
        }
        if (book.inFlight != null && book.inFlight.kind() == Kind.SLEEP) {
          group.pendingFree += model.claim.gpuMemoryBytes();
        }
      }
    }
    books.entrySet().removeIf(e -> !seen.containsKey(e.getKey()) && e.getValue().inFlight == null);
    for (Traffic t : traffic.values()) {
      t.lastByReplica.keySet().removeIf(id -> !seen.containsKey(new CopyKey(id, t.model)));
    }
    for (ModelView model : models.values()) {
      model.pressed = pressed(model, now);
      Traffic t = traffic.get(model.claim.model());
      if (t != null && model.awakeOrWaking() > 0) {
        t.demandServed = t.lastDemand;
      }
    }
    lastViews = List.copyOf(models.values());

    List<LifecycleAction> actions = new ArrayList<>();
    for (ModelView model : models.values()) {
      sleepIdleAndSurplus(model, now, actions);
    }
    for (ModelView model : models.values()) {
      while (model.awakeOrWaking() < model.claim.minAwake()
          && wake(model, Reason.MINIMUM, now, actions) == Planned.WAKE) {
        // One wake per pass until the minimum is met or the next must wait for room.
      }
    }
    for (ModelView model : models.values()) {
      Traffic t = traffic.get(model.claim.model());
      long demand = t == null ? Long.MIN_VALUE : t.lastDemand;
      if (t != null && model.awakeOrWaking() == 0 && demand != t.demandServed
          && now - demand < model.claim.idleTimeout().toNanos()
          && wake(model, Reason.DEMAND, now, actions) == Planned.WAKE) {
        t.demandServed = demand;
      }
    }
    // The most loaded per copy first: a pressure wake takes room another pressed model wants.
    List<ModelView> pressed = new ArrayList<>();
    for (ModelView model : models.values()) {
      if (model.pressed) {
        pressed.add(model);
      }
    }
    pressed.sort(Comparator.comparingDouble((ModelView m) -> -m.loadPerCopyWith(0)));
    for (ModelView model : pressed) {
      if (model.wakingCount() == 0
          && model.awakeOrWaking() < model.claim.maxAwake()
          && wake(model, Reason.PRESSURE, now, actions) == Planned.WAKE) {
        pressureSince.put(model.claim.model(), now);
      }
    }
    return actions;
  }

  /** Marks an action unanswered past the timeout as failed; its late answer is then ignored. */
  private void expire(Book book, long now) {
    LifecycleAction a = book.inFlight;
    if (a != null && now - book.startedAt >= actionTimeoutNanos) {
      book.inFlight = null;
      book.attempt++;
      failed(book, a, now, "unanswered after " + Duration.ofNanos(actionTimeoutNanos));
    }
  }

  /** Whether the copy counts as awake: an action that took effect wins over a stale view. */
  private static boolean awake(Book book, ModelState state, long now) {
    boolean seenAwake = state != ModelState.SLEEPING;
    ModelState done = book.doneTarget;
    if (done != null) {
      boolean doneAwake = done != ModelState.SLEEPING;
      if (doneAwake == seenAwake || now - book.doneAt >= SETTLE_NANOS) {
        book.doneTarget = null;
      } else {
        return doneAwake;
      }
    }
    return seenAwake;
  }

  /** Requests queue on half or more of the awake copies, or were refused at limits, for a while. */
  private boolean pressed(ModelView model, long now) {
    int active = 0;
    int waiting = 0;
    for (Copy c : model.copies) {
      if (c.awake && c.book.inFlight == null && c.replica.health() == ReplicaHealth.HEALTHY) {
        active++;
        if (c.replica.load().waitingRequests() > 0) {
          waiting++;
        }
      }
    }
    Traffic t = traffic.get(model.claim.model());
    boolean refused = t != null && t.lastAtLimit != Long.MIN_VALUE
        && now - t.lastAtLimit < Math.max(intervalNanos, TimeUnit.SECONDS.toNanos(1)) * 2;
    boolean queued = active > 0 && (2 * waiting >= active || refused);
    if (!queued) {
      pressureSince.remove(model.claim.model());
      return false;
    }
    long since = pressureSince.computeIfAbsent(model.claim.model(), m -> now);
    return now - since >= pressureDelayNanos;
  }

  private void sleepIdleAndSurplus(ModelView model, long now, List<LifecycleAction> actions) {
    List<Copy> awake = new ArrayList<>();
    for (Copy c : model.copies) {
      if (c.awakeNow() && sleepable(c, now)) {
        awake.add(c);
      }
    }
    awake.sort(Comparator.comparingLong(c -> c.book.lastUsed));
    long idleNanos = model.claim.idleTimeout().toNanos();
    for (Copy c : awake) {
      int remaining = model.awakeNowCount();
      if (remaining <= model.claim.minAwake()) {
        return;
      }
      if (remaining > model.claim.maxAwake()) {
        sleep(c, Reason.MAXIMUM, actions);
      } else if (now - c.book.lastUsed >= idleNanos) {
        sleep(c, Reason.IDLE, actions);
      }
    }
  }

  /** Not under way, not backing off, not woken within the cooldown. */
  private boolean sleepable(Copy c, long now) {
    Book b = c.book;
    return b.inFlight == null && !c.plannedSleep && !c.plannedWake && !b.unsupported
        && now >= b.retryAt
        && (b.wokeAt == Long.MIN_VALUE || now - b.wokeAt >= wakeCooldownNanos)
        && c.replica.health() != ReplicaHealth.UNHEALTHY;
  }

  private void sleep(Copy c, Reason reason, List<LifecycleAction> actions) {
    c.plannedSleep = true;
    c.group.pendingFree += c.model.claim.gpuMemoryBytes();
    actions.add(new LifecycleAction(Kind.SLEEP, c.replica.id(), c.model.claim.model(), reason,
        c.model.claim.sleepLevel()));
  }

  /** What {@link #wake} came to. */
  private enum Planned { WAKE, ROOM, NOTHING }

  /** Plans a wake of {@code model} where it fits, or else the sleeps that make room for one. */
  private Planned wake(ModelView model, Reason reason, long now, List<LifecycleAction> actions) {
    long need = model.claim.gpuMemoryBytes();
    List<Copy> candidates = new ArrayList<>();
    for (Copy c : model.copies) {
      Book b = c.book;
      if (!c.holdsMemory() && !b.unsupported && now >= b.retryAt
          && c.replica.health() == ReplicaHealth.HEALTHY
          && (reason != Reason.PRESSURE || b.sleptAt == Long.MIN_VALUE
              || now - b.sleptAt >= wakeCooldownNanos)) {
        candidates.add(c);
      }
    }
    if (candidates.isEmpty()) {
      return Planned.NOTHING;
    }
    Copy best = null;
    for (Copy c : candidates) {
      if (c.group.free() >= need && (best == null || c.group.free() > best.group.free())) {
        best = c;
      }
    }
    if (best != null) {
      best.plannedWake = true;
      best.group.used += need;
      actions.add(new LifecycleAction(Kind.WAKE, best.replica.id(), model.claim.model(), reason,
          0));
      return Planned.WAKE;
    }
    for (Copy c : candidates) {
      if (c.group.free() + c.group.pendingFree >= need) {
        return Planned.ROOM;
      }
    }
    List<Copy> bestVictims = null;
    for (Copy c : candidates) {
      List<Copy> victims = victims(c, reason, need, now);
      if (victims != null
          && (bestVictims == null || VICTIMS_COST.compare(victims, bestVictims) < 0)) {
        bestVictims = victims;
      }
    }
    if (bestVictims == null) {
      return Planned.NOTHING;
    }
    for (Copy v : bestVictims) {
      sleep(v, Reason.MAKE_ROOM, actions);
    }
    return Planned.ROOM;
  }

  /**
   * The copies on {@code c}'s group whose sleep makes room, or null: idle copies first, least
   * recently used first, then busy ones of the models left least loaded per copy. A pressure wake
   * takes no copy whose model would be left as loaded per copy as the pressed model after its wake.
   */
  private @Nullable List<Copy> victims(Copy c, Reason reason, long need, long now) {
    Group g = c.group;
    long room = g.free() + g.pendingFree;
    List<Copy> eligible = new ArrayList<>();
    for (Copy v : g.copies) {
      if (v.model != c.model && v.awakeNow() && sleepable(v, now)
          && !(reason == Reason.PRESSURE && v.model.pressed)) {
        eligible.add(v);
      }
    }
    eligible.sort(Comparator.comparing((Copy v) -> v.load() > 0)
        .thenComparingDouble(v -> v.load() > 0 ? v.model.loadPerCopyWithout(1) : 0)
        .thenComparingLong(v -> v.book.lastUsed));
    double pressedAfter = c.model.loadPerCopyWith(1);
    List<Copy> victims = new ArrayList<>();
    Map<ModelView, Integer> taken = new HashMap<>();
    for (Copy v : eligible) {
      if (room >= need) {
        break;
      }
      int gone = taken.getOrDefault(v.model, 0);
      int left = v.model.awakeNowCount() - gone;
      boolean last = left <= 1;
      if (left <= v.model.claim.minAwake()
          || last && (reason == Reason.PRESSURE || now - v.book.lastUsed < wakeCooldownNanos)
          || reason == Reason.PRESSURE && v.load() > 0
              && v.model.loadPerCopyWithout(gone + 1) >= pressedAfter) {
        continue;
      }
      victims.add(v);
      taken.merge(v.model, 1, Integer::sum);
      room += v.model.claim.gpuMemoryBytes();
    }
    return room >= need ? victims : null;
  }

  /** Fewest sleeps, then fewest requests to finish first, then the least recently used. */
  private static final Comparator<List<Copy>> VICTIMS_COST =
      Comparator.<List<Copy>>comparingInt(List::size).thenComparingInt(ModelLifecycle::load)
          .thenComparingLong(ModelLifecycle::newest);

  /** The requests the copies must finish before they sleep, which the wake behind them waits. */
  private static int load(List<Copy> copies) {
    int n = 0;
    for (Copy c : copies) {
      n += c.load();
    }
    return n;
  }

  private static long newest(List<Copy> copies) {
    long newest = Long.MIN_VALUE;
    for (Copy c : copies) {
      newest = Math.max(newest, c.book.lastUsed);
    }
    return newest;
  }

  // ---- dispatch and answers ----

  private List<LifecycleAction> dispatch(List<LifecycleAction> actions) {
    long now = ticker.getAsLong();
    List<Runnable> starts = new ArrayList<>(actions.size());
    synchronized (this) {
      for (LifecycleAction a : actions) {
        CopyKey key = new CopyKey(a.replicaId(), a.model());
        Book book = books.computeIfAbsent(key, k -> new Book(now));
        book.inFlight = a;
        book.startedAt = now;
        long attempt = ++book.attempt;
        starts.add(() -> start(key, a, attempt));
      }
    }
    for (Runnable start : starts) {
      start.run();
    }
    return actions;
  }

  private void start(CopyKey key, LifecycleAction a, long attempt) {
    CompletionStage<ModelActuator.Outcome> stage;
    try {
      stage = a.kind() == Kind.WAKE ? actuator.wake(a.replicaId(), a.model())
          : actuator.sleep(a.replicaId(), a.model(), a.sleepLevel());
    } catch (RuntimeException e) {
      warn("lifecycle actuator threw on " + a, e);
      stage = CompletableFuture.completedFuture(ModelActuator.Outcome.FAILED);
    }
    stage.whenComplete((outcome, error) -> answered(key, a, attempt,
        error != null || outcome == null ? ModelActuator.Outcome.FAILED : outcome, error));
  }

  private void answered(CopyKey key, LifecycleAction a, long attempt,
      ModelActuator.Outcome outcome, @Nullable Throwable error) {
    boolean again;
    synchronized (this) {
      long now = ticker.getAsLong();
      Book book = books.get(key);
      if (book == null) {
        return;
      }
      if (book.attempt != attempt || book.inFlight != a) {
        if (outcome == ModelActuator.Outcome.DONE) {
          tookEffect(book, a, now);
        }
        return;
      }
      book.inFlight = null;
      switch (outcome) {
        case DONE:
          tookEffect(book, a, now);
          actionsDone++;
          break;
        case UNSUPPORTED:
          book.unsupported = true;
          actionsUnsupported++;
          warn("lifecycle: the engine cannot " + a + "; not retried", error);
          break;
        default:
          failed(book, a, now, error == null ? "the engine refused or did not answer"
              : String.valueOf(error));
          break;
      }
      again = outcome != ModelActuator.Outcome.UNSUPPORTED;
    }
    if (again) {
      trigger();
    }
  }

  private static void tookEffect(Book book, LifecycleAction a, long now) {
    book.failures = 0;
    book.retryAt = Long.MIN_VALUE;
    book.doneAt = now;
    if (a.kind() == Kind.WAKE) {
      book.doneTarget = ModelState.ACTIVE;
      book.wokeAt = now;
      book.lastUsed = Math.max(book.lastUsed, now);
    } else {
      book.doneTarget = ModelState.SLEEPING;
      book.sleptAt = now;
    }
  }

  private void failed(Book book, LifecycleAction a, long now, String why) {
    actionsFailed++;
    book.failures++;
    long delay = initialBackoffNanos;
    for (int i = 1; i < book.failures && delay < maxBackoffNanos; i++) {
      delay = Math.min(maxBackoffNanos, delay * 2);
    }
    book.retryAt = now + Math.min(delay, maxBackoffNanos);
    warn("lifecycle: " + a + " failed (" + why + "), attempt " + book.failures + "; retrying in "
        + Duration.ofNanos(Math.min(delay, maxBackoffNanos)), null);
  }

  private void warn(String message, @Nullable Throwable error) {
    long now = System.nanoTime();
    long last = lastLogNanos.get();
    if ((last == Long.MIN_VALUE || now - last >= LOG_INTERVAL_NANOS)
        && lastLogNanos.compareAndSet(last, now)) {
      LOG.log(Level.WARNING, message, error);
    }
  }

  // ---- traffic (the routing path) ----

  /** One claimed model's traffic: written by decision threads, read by rounds. */
  private static final class Traffic {
    final String model;
    final ConcurrentHashMap<String, AtomicLong> lastByReplica = new ConcurrentHashMap<>();
    volatile long lastRequest;
    volatile long lastDemand = Long.MIN_VALUE;
    volatile long lastAtLimit = Long.MIN_VALUE;
    // The demand a wake (or an awake copy) answered; guarded by the lifecycle.
    long demandServed = Long.MIN_VALUE;

    Traffic(String model, long now) {
      this.model = model;
      this.lastRequest = now;
    }

  }

  private final class TrafficListener implements RoutingListener {
    @Override
    public void onDecision(RoutingRequest request, RoutingDecision decision, long selectNanos) {
      Replica replica = decision.isRouted() ? decision.replica() : null;
      String model = request.model().orElse(null);
      if (model == null && replica != null && replica.models().size() == 1) {
        model = replica.models().keySet().iterator().next();
      }
      Traffic t = model == null ? null : traffic.get(model);
      if (t == null) {
        return;
      }
      long now = ticker.getAsLong();
      t.lastRequest = now;
      if (replica != null) {
        t.lastByReplica.computeIfAbsent(replica.id(), id -> new AtomicLong()).set(now);
      } else if (decision.reason() == RoutingReason.MODEL_WAKING
          || decision.reason() == RoutingReason.NO_REPLICA) {
        demand(t, now);
      } else if (decision.reason() == RoutingReason.ALL_AT_LIMIT) {
        t.lastAtLimit = now;
      }
    }

    @Override
    public void onWakeRequested(Replica replica, String model) {
      Traffic t = traffic.get(model);
      if (t != null) {
        demand(t, ticker.getAsLong());
      }
    }

    private void demand(Traffic t, long now) {
      long before = t.lastDemand;
      t.lastDemand = now;
      if (before == Long.MIN_VALUE || now - before >= intervalNanos) {
        trigger();
      }
    }
  }

  // ---- the round's view ----

  private record CopyKey(String replicaId, String model) {}

  /** What the lifecycle remembers of one copy across rounds. */
  private static final class Book {
    @Nullable LifecycleAction inFlight;
    long startedAt;
    long attempt;
    @Nullable ModelState doneTarget;
    long doneAt;
    int failures;
    long retryAt = Long.MIN_VALUE;
    boolean unsupported;
    long lastUsed;
    long wokeAt = Long.MIN_VALUE;
    long sleptAt = Long.MIN_VALUE;

    Book(long now) {
      this.lastUsed = now;
    }
  }

  private static final class Group {
    final long capacity;
    final List<Copy> copies = new ArrayList<>();
    long used;
    long pendingFree;

    Group(long capacity) {
      this.capacity = capacity;
    }

    long free() {
      return capacity - used;
    }
  }

  private static final class Copy {
    final Replica replica;
    final Group group;
    final ModelView model;
    final Book book;
    final boolean awake;
    boolean plannedSleep;
    boolean plannedWake;

    Copy(Replica replica, Group group, ModelView model, Book book, boolean awake) {
      this.replica = replica;
      this.group = group;
      this.model = model;
      this.book = book;
      this.awake = awake;
    }

    boolean holdsMemory() {
      return awake || book.inFlight != null || plannedWake;
    }

    /** Awake, serving, and not on its way to sleep. */
    boolean awakeNow() {
      return awake && !plannedSleep && (book.inFlight == null || book.inFlight.kind() == Kind.WAKE);
    }

    boolean waking() {
      return plannedWake || book.inFlight != null && book.inFlight.kind() == Kind.WAKE;
    }

    /** Requests running and waiting on this copy's engine, as last scraped. */
    int load() {
      return awake ? replica.load().runningRequests() + replica.load().waitingRequests() : 0;
    }
  }

  private static final class ModelView {
    final ModelClaim claim;
    final List<Copy> copies = new ArrayList<>();
    boolean pressed;

    ModelView(ModelClaim claim) {
      this.claim = claim;
    }

    /** The model's requests over its awake copies, were {@code fewer} of them asleep. */
    double loadPerCopyWithout(int fewer) {
      int left = awakeNowCount() - fewer;
      return left <= 0 ? Double.POSITIVE_INFINITY : (double) load() / left;
    }

    /** The model's requests over its awake copies and {@code more} woken ones. */
    double loadPerCopyWith(int more) {
      return (double) load() / (awakeNowCount() + wakingCount() + more);
    }

    int load() {
      int n = 0;
      for (Copy c : copies) {
        if (c.awakeNow()) {
          n += c.load();
        }
      }
      return n;
    }

    int awakeNowCount() {
      int n = 0;
      for (Copy c : copies) {
        if (c.awakeNow()) {
          n++;
        }
      }
      return n;
    }

    int wakingCount() {
      int n = 0;
      for (Copy c : copies) {
        if (c.waking() && !c.awake) {
          n++;
        }
      }
      return n;
    }

    int awakeOrWaking() {
      return awakeNowCount() + wakingCount();
    }

    int awakeCount() {
      int n = 0;
      for (Copy c : copies) {
        if (c.awake) {
          n++;
        }
      }
      return n;
    }

    int asleepCount() {
      return copies.size() - awakeCount();
    }
  }

  /** Builds a {@link ModelLifecycle}; each setter checks its argument. Not thread-safe. */
  public static final class Builder {
    private final Map<String, ModelClaim> claims = new LinkedHashMap<>();
    private @Nullable Supplier<List<Replica>> fleet;
    private @Nullable FleetView fleetView;
    private @Nullable ModelActuator actuator;
    private LifecycleLease lease = LifecycleLease.local();
    private String holder = "gateway-" + UUID.randomUUID();
    private Duration leaseTtl = DEFAULT_LEASE_TTL;
    private Duration interval = DEFAULT_INTERVAL;
    private Function<Replica, String> gpuGroup = Replica::id;
    private long gpuMemoryBytes = -1;
    private final Map<String, Long> groupMemory = new HashMap<>();
    private Duration wakeCooldown = DEFAULT_WAKE_COOLDOWN;
    private Duration pressureDelay = DEFAULT_PRESSURE_DELAY;
    private Duration actionTimeout = DEFAULT_ACTION_TIMEOUT;
    private Duration initialBackoff = DEFAULT_INITIAL_BACKOFF;
    private Duration maxBackoff = DEFAULT_MAX_BACKOFF;
    private LongSupplier ticker = System::nanoTime;

    private Builder() {}

    /** Adds a claim; one per model. */
    public Builder claim(ModelClaim claim) {
      Objects.requireNonNull(claim, "claim");
      if (claims.putIfAbsent(claim.model(), claim) != null) {
        throw new IllegalArgumentException("claim: " + claim.model()
            + " claimed twice (expected: one claim per model)");
      }
      return this;
    }

    /** Adds claims; one per model. */
    public Builder claims(Collection<ModelClaim> claims) {
      Objects.requireNonNull(claims, "claims").forEach(this::claim);
      return this;
    }

    /** The fleet as it is now, with each replica's models and their states; required. */
    public Builder fleet(Supplier<List<Replica>> fleet) {
      this.fleet = Objects.requireNonNull(fleet, "fleet");
      this.fleetView = null;
      return this;
    }

    /**
     * The fleet view's replicas, and its sleep mode as the actuator unless {@link #actuator} is
     * given.
     */
    public Builder fleet(FleetView view) {
      Objects.requireNonNull(view, "fleet");
      this.fleet = view::replicas;
      this.fleetView = view;
      return this;
    }

    /** Carries the actions out; by default the {@link #fleet(FleetView) fleet view}'s sleep mode. */
    public Builder actuator(ModelActuator actuator) {
      this.actuator = Objects.requireNonNull(actuator, "actuator");
      return this;
    }

    /** The lease the gateways share; default {@link LifecycleLease#local()} (one gateway). */
    public Builder lease(LifecycleLease lease) {
      this.lease = Objects.requireNonNull(lease, "lease");
      return this;
    }

    /** This gateway's name on the lease, unique among the gateways; default a random one. */
    public Builder holder(String holder) {
      this.holder = Checks.notBlank(holder, "holder");
      return this;
    }

    /** How long a holding lasts without renewal (renewed every round); default 10 s. */
    public Builder leaseTtl(Duration ttl) {
      this.leaseTtl = Checks.positive(ttl, "leaseTtl");
      return this;
    }

    /** Time between rounds once {@link ModelLifecycle#start() started}; default 1 s. */
    public Builder interval(Duration interval) {
      this.interval = Checks.positive(interval, "interval");
      return this;
    }

    /**
     * The GPU group a replica's copies share memory in, e.g. the node or GPU behind several
     * engines; default the replica's id (each replica its own GPUs).
     */
    public Builder gpuGroup(Function<Replica, String> group) {
      this.gpuGroup = Objects.requireNonNull(group, "gpuGroup");
      return this;
    }

    /** GPU memory of each group, in bytes, that awake copies share; required. */
    public Builder gpuMemoryBytes(long bytes) {
      this.gpuMemoryBytes = Checks.positive(bytes, "gpuMemoryBytes");
      return this;
    }

    /** GPU memory of one group, in bytes, in place of the default. */
    public Builder gpuMemoryBytes(String group, long bytes) {
      groupMemory.put(Checks.notBlank(group, "group"), Checks.positive(bytes, "gpuMemoryBytes"));
      return this;
    }

    /**
     * How long a woken copy stays awake at least (not slept for idleness nor to make room), and how
     * long a slept one stays asleep before pressure may wake it: the hysteresis; default 30 s.
     */
    public Builder wakeCooldown(Duration cooldown) {
      this.wakeCooldown = Checks.nonNegative(cooldown, "wakeCooldown");
      return this;
    }

    /** How long requests must queue before another copy is woken for them; default 5 s. */
    public Builder pressureDelay(Duration delay) {
      this.pressureDelay = Checks.nonNegative(delay, "pressureDelay");
      return this;
    }

    /** An action unanswered this long counts as failed; default 2 minutes. */
    public Builder actionTimeout(Duration timeout) {
      this.actionTimeout = Checks.positive(timeout, "actionTimeout");
      return this;
    }

    /** The first and the longest delay before a failed action is retried; default 1 s, 60 s. */
    public Builder retryBackoff(Duration initial, Duration max) {
      Checks.positive(initial, "initialBackoff");
      Checks.positive(max, "maxBackoff");
      if (max.compareTo(initial) < 0) {
        throw new IllegalArgumentException(
            "maxBackoff: " + max + " (expected: >= initialBackoff " + initial + ")");
      }
      this.initialBackoff = initial;
      this.maxBackoff = max;
      return this;
    }

    /** The clock, in nanoseconds, for tests and simulations; default {@link System#nanoTime()}. */
    public Builder ticker(LongSupplier ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    /**
     * Builds the lifecycle; call {@link ModelLifecycle#start()} to run it, or
     * {@link ModelLifecycle#runOnce()} from a scheduler of your own.
     *
     * @throws IllegalStateException if no claim, no fleet, no actuator or no GPU memory was given
     */
    public ModelLifecycle build() {
      if (claims.isEmpty()) {
        throw new IllegalStateException("claims: none (expected: at least one claim)");
      }
      if (fleet == null) {
        throw new IllegalStateException("fleet: not set (expected: a fleet view or a supplier)");
      }
      ModelActuator act = actuator;
      if (act == null && fleetView != null) {
        act = ModelActuator.of(fleetView);
      }
      if (act == null) {
        throw new IllegalStateException(
            "actuator: not set (expected: an actuator, or a fleet view to act through)");
      }
      if (gpuMemoryBytes < 0) {
        throw new IllegalStateException("gpuMemoryBytes: not set (expected: > 0)");
      }
      return new ModelLifecycle(this, act, fleet);
    }
  }
}
