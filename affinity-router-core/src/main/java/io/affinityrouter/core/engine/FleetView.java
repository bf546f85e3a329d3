package io.affinityrouter.core.engine;

import io.affinityrouter.PrefixCacheEvents;
import io.affinityrouter.Replica;
import io.affinityrouter.core.kvevents.KvEventStats;
import io.affinityrouter.internal.Checks;
import io.affinityrouter.spi.ReplicaDiscovery;
import io.affinityrouter.spi.ReplicaEndpoint;
import io.affinityrouter.spi.RoutingListener;
import java.net.http.HttpClient;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.DoubleSupplier;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * A live view of a fleet of vLLM and SGLang engines, as the {@code List<Replica>} a gateway passes
 * to every {@code select}:
 *
 * <pre>{@code
 * try (FleetView fleet = FleetView.builder()
 *     .endpoint(ReplicaEndpoint.of("vllm-0", "http://10.0.0.7:8000"))
 *     .endpoint(ReplicaEndpoint.of("vllm-1", "http://10.0.0.8:8000"))
 *     .build()) {
 *   Router router = AffinityRouter.builder().addListener(fleet.wakeListener()).build();
 *   fleet.start();
 *   fleet.firstSnapshot().toCompletableFuture().get(5, TimeUnit.SECONDS);
 *   RoutingDecision decision = router.select(request, fleet.replicas());
 * }
 * }</pre>
 *
 * <p><b>Replicas</b> come from {@link Builder#endpoint configuration} or a
 * {@link ReplicaDiscovery} (polled every {@link Builder#discoveryInterval}, and applied at once
 * when it pushes a change). <b>Scraping</b>: every {@link Builder#scrapeInterval}, each replica's
 * {@code /metrics} is fetched asynchronously (at most one scrape in flight per replica, each cut
 * off after {@link Builder#scrapeTimeout}) and read with {@link io.affinityrouter.core.metrics.EngineMetrics#parse} and a
 * per-replica {@link io.affinityrouter.core.metrics.ThroughputTracker} into the replica's load and
 * model states. <b>Snapshots</b>: {@link #replicas()} is a volatile read of an immutable list, the
 * same object until a replica changes; it never blocks and never does I/O.
 *
 * <p><b>Health.</b> A replica never scraped is {@code UNHEALTHY} (nothing is known of it yet; see
 * {@link #firstSnapshot()} for readiness). It turns unhealthy at once when a scrape's connection is
 * refused or the gateway reports a failed request ({@link #reportFailure}), and after
 * {@link Builder#failuresToUnhealthy} scrapes in a row that time out, answer non-200 or carry no
 * engine metrics. An unhealthy replica is re-probed after a backoff ({@link Builder#initialBackoff},
 * doubling with each failure in a row up to {@link Builder#maxBackoff}, spread by
 * {@link Builder#backoffJitter}) and turns healthy on the first successful scrape after it, ready
 * since then (the router ramps its traffic up again).
 *
 * <p><b>Sleep mode</b> (vLLM: served when it runs with {@code VLLM_SERVER_DEV_MODE=1} and
 * {@code --enable-sleep-mode}): {@link #wakeUp}, {@link #sleep}, {@link #isSleeping}, and
 * {@link #wakeListener()}, which turns the router's wake request into a {@code POST /wake_up}.
 * A model's sleep state comes from {@code vllm:engine_sleep_state} in the scrape, or from
 * {@code GET /is_sleeping} alongside each scrape when {@link Builder#probeSleepState} is on.
 * On SGLang the same calls release and resume its memory ({@code /release_memory_occupation},
 * {@code /resume_memory_occupation}): its scheduler refuses to release while any request is in
 * flight, so {@link #sleep} is sent only in {@link SleepMode#WAIT} and only when the last scrape
 * showed it idle (else {@code FAILED}, or {@code UNSUPPORTED} for the other modes); SGLang
 * reports no sleep state, so its models show {@code SLEEPING} from a release this view made
 * until a resume, and {@link #isSleeping} is {@code UNSUPPORTED}.
 *
 * <p>Thread-safe. Work runs on the fleet view's scheduler thread and the HTTP client's executor,
 * never on a caller's thread. {@link #close()} stops the scheduler and cancels every scrape and
 * action in flight; idempotent.
 */
public final class FleetView implements AutoCloseable {
  private static final AtomicInteger INSTANCES = new AtomicInteger();

  private final FleetSettings settings;
  private final @Nullable ExecutorService ownedExecutor;
  private final ScheduledThreadPoolExecutor scheduler;
  private final String threadPrefix;
  private final FleetState state;
  private final EngineActions actions;
  private final RoutingListener wakeListener = new RoutingListener() {
    @Override
    public void onWakeRequested(Replica replica, String model) {
      wakeUp(replica.id(), List.of());
    }
  };
  private final Set<CompletableFuture<List<Replica>>> pendingRounds =
      ConcurrentHashMap.newKeySet(); // scrapeNow() calls whose task close() may drop unrun
  private final AtomicBoolean started = new AtomicBoolean();
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicLong lastTaskLog = new AtomicLong(Long.MIN_VALUE);
  private volatile AutoCloseable watch = () -> {};
  private volatile @Nullable KvEventFeeds kvEvents;

  private FleetView(FleetSettings settings) {
    this.settings = settings;
    this.threadPrefix = "affinity-fleet-" + INSTANCES.incrementAndGet();
    this.scheduler = new ScheduledThreadPoolExecutor(1, daemon(threadPrefix + "-scheduler"));
    scheduler.setRemoveOnCancelPolicy(true);
    scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    HttpClient client;
    if (settings.httpClient() != null) {
      client = settings.httpClient();
      this.ownedExecutor = null;
    } else {
      this.ownedExecutor = Executors.newCachedThreadPool(daemon(threadPrefix + "-http"));
      // redirects are followed as Prometheus follows them (never from https to http)
      client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
          .followRedirects(HttpClient.Redirect.NORMAL)
          .connectTimeout(settings.scrapeTimeout()).executor(ownedExecutor).build();
    }
    this.state = new FleetState(settings, client, scheduler, closed);
    this.actions = new EngineActions(client, settings.actionTimeout(), settings.maxResponseBytes(),
        state, this::submit);
    state.applyEndpoints(settings.initialEndpoints());
  }

  /** Returns a builder with the defaults listed on its setters. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Subscribes, from {@link #start()} to {@link #close()}, to the KV-cache events of every replica
   * whose endpoint names a {@link ReplicaEndpoint#kvEventsUri()} (with its replay URI and
   * data-parallel ranks), following the discovery, and feeds them to {@code sink}, normally
   * {@code router.cacheEvents()} of the router this view's {@link #wakeListener()} was given to.
   * Needs {@code org.zeromq:jeromq} and {@code org.msgpack:msgpack-core} on the class path
   * (optional dependencies of the core). Off unless called. Engine blocks or pages are mapped into
   * blocks of the sink's {@link PrefixCacheEvents#tokensPerBlock()}, the router's own. A replica
   * serving one model stores its blocks for that model: the endpoint's
   * {@link ReplicaEndpoint#models()}, or when it names none, the model its scrapes show (the
   * subscription restarts, with a replay, when that changes).
   *
   * @return this
   * @throws IllegalStateException if started, closed, or already given a sink
   */
  public synchronized FleetView kvEvents(PrefixCacheEvents sink) {
    Objects.requireNonNull(sink, "sink");
    if (started.get() || closed.get() || kvEvents != null) {
      throw new IllegalStateException(
          "kvEvents: set after start, after close or twice (expected: once, before start())");
    }
    KvEventFeeds feeds = new KvEventFeeds(sink);
    kvEvents = feeds;
    state.onEndpoints(feeds::sync);
    addSnapshotListener(feeds::scraped);
    return this;
  }

  /**
   * Starts the periodic discovery polls and scrapes (the first at once) and subscribes to the
   * discovery's pushes. Idempotent. Without it nothing is scraped except by {@link #scrapeNow()}.
   *
   * @return this
   * @throws IllegalStateException if closed
   */
  public synchronized FleetView start() {
    if (closed.get()) {
      throw new IllegalStateException("closed");
    }
    if (started.compareAndSet(false, true)) {
      try {
        watch = settings.discovery().watch(endpoints -> submit(() -> state.applyEndpoints(endpoints)));
      } catch (RuntimeException e) {
        // a discovery that cannot push is polled
      }
      KvEventFeeds feeds = kvEvents;
      if (feeds != null) {
        feeds.start(state.endpoints());
      }
      scheduler.scheduleWithFixedDelay(guarded("discovery poll", state::pollDiscovery), 0,
          settings.discoveryInterval().toNanos(), TimeUnit.NANOSECONDS);
      scheduler.scheduleAtFixedRate(guarded("scrape round", state::scrapeDue), 0,
          settings.scrapeInterval().toNanos(), TimeUnit.NANOSECONDS);
    }
    return this;
  }

  /**
   * The replicas as last seen, in discovery order: an immutable list, the same object until a
   * replica's load, models or health changes. A volatile read; never blocks.
   */
  public List<Replica> replicas() {
    return state.snapshot();
  }

  /** The replica with this id as last seen, if the fleet has it. Never blocks. */
  public Optional<Replica> replica(String replicaId) {
    Objects.requireNonNull(replicaId, "replicaId");
    for (Replica r : state.snapshot()) {
      if (r.id().equals(replicaId)) {
        return Optional.of(r);
      }
    }
    return Optional.empty();
  }

  /**
   * Completes with the first snapshot holding scraped data (a replica with at least one successful
   * scrape); completes exceptionally if the view is closed before. A gateway's readiness check.
   */
  public CompletionStage<List<Replica>> firstSnapshot() {
    return state.first.minimalCompletionStage();
  }

  /**
   * Calls {@code listener} with every new snapshot, on the thread whose scrape changed it, outside
   * the view's locks: for a router's {@link io.affinityrouter.Router#refresh}, so requests held
   * for room are offered again when a scrape shows some. A listener that throws is logged, at most
   * every 10 s, and still called for later snapshots. Keep it short: scrapes wait for it.
   *
   * @return this view
   */
  public FleetView addSnapshotListener(Consumer<? super List<Replica>> listener) {
    state.addSnapshotListener(Objects.requireNonNull(listener, "listener"));
    return this;
  }

  /**
   * Calls {@code listener} with the id of every replica the discovery stops listing, after the
   * snapshot without it is published: pass {@code router::retire} so the router forgets pods that
   * are gone. A listener that throws is logged, at most every 10 s.
   *
   * @return this view
   */
  public FleetView addRemovalListener(Consumer<? super String> listener) {
    state.addRemovalListener(Objects.requireNonNull(listener, "listener"));
    return this;
  }

  /** Whether {@link #firstSnapshot()} has completed normally: some replica has been scraped. */
  public boolean ready() {
    return state.first.isDone() && !state.first.isCompletedExceptionally();
  }

  /**
   * Polls the discovery and scrapes every replica that is due (not already being scraped, not
   * inside a backoff), now, on the fleet view's threads. For tests and start-up; the periodic
   * scrapes of {@link #start()} do the same.
   *
   * @return completes, with the snapshot after them, when those scrapes and any already in flight
   *     have settled (each within the scrape timeout); at once after {@link #close()}
   */
  public CompletionStage<List<Replica>> scrapeNow() {
    CompletableFuture<List<Replica>> result = new CompletableFuture<>();
    pendingRounds.add(result);
    result.whenComplete((r, e) -> pendingRounds.remove(result));
    if (!submit(() -> {
      state.pollDiscovery();
      CompletableFuture.allOf(state.scrapeDue().toArray(new CompletableFuture<?>[0]))
          .whenComplete((v, e) -> result.complete(state.snapshot()));
    })) {
      result.complete(state.snapshot());
    }
    return result.minimalCompletionStage();
  }

  /**
   * Reports that a request the gateway forwarded to the replica failed (connection refused, reset,
   * no response): the replica turns unhealthy at once and is re-probed after its backoff. Reports
   * during a backoff count once. Unknown ids are ignored. Never blocks on I/O.
   *
   * @param cause what failed (not recorded beyond this call; reserved for finer policies)
   */
  public void reportFailure(String replicaId, Throwable cause) {
    Objects.requireNonNull(replicaId, "replicaId");
    Objects.requireNonNull(cause, "cause");
    state.reportFailure(replicaId);
  }

  /**
   * A listener that answers the router's {@link RoutingListener#onWakeRequested} with
   * {@link #wakeUp} of the replica (all tags): off the caller's thread, at most one call in flight
   * per replica. Register it with {@code AffinityRouter.builder().addListener(...)}.
   */
  public RoutingListener wakeListener() {
    return wakeListener;
  }

  /** {@code POST /wake_up} requests sent so far (not counting de-duplicated ones). */
  public long wakeRequestsSent() {
    return actions.wakeRequestsSent();
  }

  /**
   * Sends vLLM's {@code POST /wake_up} (with {@code tags}, e.g. {@code weights}, {@code kv_cache};
   * none wakes everything) from the fleet view's own thread. While a wake of the replica is in
   * flight, another call returns the same outcome instead of sending again.
   *
   * @return the outcome: {@code UNSUPPORTED} for SGLang or a vLLM without dev mode (404),
   *     {@code UNKNOWN_REPLICA}, {@code FAILED}, {@code CLOSED}, or {@code DONE}; never
   *     exceptional
   * @throws IllegalArgumentException if a tag is blank
   */
  public CompletionStage<EngineActionResult> wakeUp(String replicaId, Collection<String> tags) {
    return actions.wakeUp(Objects.requireNonNull(replicaId, "replicaId"), tags)
        .minimalCompletionStage();
  }

  /** What vLLM does with the requests in flight when it is put to sleep. */
  public enum SleepMode {
    /** They are aborted at once: vLLM's default when a caller names no mode. */
    ABORT("abort"),
    /** They run to completion before the engine sleeps. */
    WAIT("wait"),
    /** They are frozen in the queue and resume when the engine wakes. */
    KEEP("keep");

    private final String wire;

    SleepMode(String wire) {
      this.wire = wire;
    }
  }

  /**
   * As {@link #sleep(String, int, SleepMode)} with {@link SleepMode#WAIT}: the requests in flight
   * finish first (vLLM itself would abort them).
   */
  public CompletionStage<EngineActionResult> sleep(String replicaId, int level) {
    return sleep(replicaId, level, SleepMode.WAIT);
  }

  /**
   * Sends vLLM's {@code POST /sleep?level=...&mode=...}: level 1 offloads the weights to CPU
   * memory and drops the KV cache, level 2 drops both; {@code mode} says what happens to the
   * requests in flight. The model shows {@code SLEEPING} from the next scrape. A vLLM older than
   * the {@code mode} parameter ignores it and aborts.
   *
   * @return the outcome, as for {@link #wakeUp}; never exceptional
   * @throws IllegalArgumentException if {@code level} is not 1 or 2
   */
  public CompletionStage<EngineActionResult> sleep(String replicaId, int level, SleepMode mode) {
    Objects.requireNonNull(replicaId, "replicaId");
    Objects.requireNonNull(mode, "mode");
    if (level != 1 && level != 2) {
      throw new IllegalArgumentException("level: " + level + " (expected: 1 or 2)");
    }
    return actions.send(replicaId, EngineActions.Action.sleep(level, mode.wire))
        .minimalCompletionStage();
  }

  /**
   * Asks vLLM's {@code GET /is_sleeping}; the answer is in {@link EngineActionResult#sleeping()}.
   *
   * @return the outcome, as for {@link #wakeUp}; never exceptional
   */
  public CompletionStage<EngineActionResult> isSleeping(String replicaId) {
    Objects.requireNonNull(replicaId, "replicaId");
    return actions.send(replicaId, EngineActions.Action.isSleeping()).minimalCompletionStage();
  }

  /**
   * A periodic task that survives its own failure, an error included (anything escaping would
   * cancel it, and every replica would keep its last load as if healthy); each failure is logged,
   * at most every 10 s.
   */
  private Runnable guarded(String what, Runnable task) {
    return () -> {
      try {
        task.run();
      } catch (RuntimeException | Error e) {
        long now = System.nanoTime();
        long last = lastTaskLog.get();
        if ((last == Long.MIN_VALUE || now - last >= 10_000_000_000L)
            && lastTaskLog.compareAndSet(last, now)) {
          System.getLogger(FleetView.class.getName()).log(System.Logger.Level.ERROR,
              what + " failed; the next round runs (logged at most every 10 s)", e);
        }
      }
    };
  }

  private boolean submit(Runnable task) {
    if (closed.get()) {
      return false;
    }
    try {
      scheduler.execute(task);
      return true;
    } catch (RejectedExecutionException e) {
      return false;
    }
  }

  /**
   * Stops the scheduler, cancels every scrape and action in flight (actions complete
   * {@code CLOSED}), stops listening to the discovery, and shuts down the HTTP client's executor
   * when the fleet view created the client. {@link #replicas()} keeps returning the last snapshot.
   * Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      watch.close();
    } catch (Exception e) {
      // the discovery's problem; we stop listening regardless
    }
    scheduler.shutdownNow();
    KvEventFeeds feeds = kvEvents;
    if (feeds != null) {
      feeds.close();
    }
    state.abandonAll();
    actions.closeAll();
    for (CompletableFuture<List<Replica>> round : List.copyOf(pendingRounds)) {
      round.complete(state.snapshot());
    }
    state.first.completeExceptionally(new IllegalStateException("closed before a first scrape"));
    if (ownedExecutor != null) {
      ownedExecutor.shutdownNow();
    }
    if (!Thread.currentThread().getName().startsWith(threadPrefix + "-")) {
      try {
        scheduler.awaitTermination(5, TimeUnit.SECONDS);
        if (ownedExecutor != null) {
          ownedExecutor.awaitTermination(5, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * The KV-event subscribers' counters (batches, events, gaps, replays, skips), by replica id: one
   * entry per replica whose endpoint names a {@link ReplicaEndpoint#kvEventsUri()}, once started;
   * empty without {@link #kvEvents}.
   */
  public Map<String, KvEventStats> kvEventStats() {
    KvEventFeeds feeds = kvEvents;
    return feeds == null ? Map.of() : feeds.stats();
  }

  /** The prefix of the names of the threads this fleet view owns (for leak checks). */
  String threadPrefix() {
    return threadPrefix;
  }

  private static ThreadFactory daemon(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
  /**
   * Builds a {@link FleetView}: replicas from {@link #endpoint} (configuration) or
   * {@link #discovery}, and the scrape, health and action settings. Each setter checks its
   * argument and throws {@link IllegalArgumentException} with a message such as
   * {@code "scrapeInterval: PT0S (expected: > 0)"}. Not thread-safe.
   */
  public static final class Builder {
    /** Default {@link #scrapeInterval}: 100 ms (engines' load moves fast). */
    public static final Duration DEFAULT_SCRAPE_INTERVAL = Duration.ofMillis(100);
    /** Default {@link #scrapeTimeout}: 1 s. */
    public static final Duration DEFAULT_SCRAPE_TIMEOUT = Duration.ofSeconds(1);
    /** Default {@link #metricsPath}: {@value}. */
    public static final String DEFAULT_METRICS_PATH = "/metrics";
    /** Default {@link #maxResponseBytes}: 16 MiB (a vLLM exposition is tens of KiB). */
    public static final int DEFAULT_MAX_RESPONSE_BYTES = 16 << 20;
    /** Default {@link #failuresToUnhealthy}: {@value}. */
    public static final int DEFAULT_FAILURES_TO_UNHEALTHY = 3;
    /** Default {@link #initialBackoff}: 1 s. */
    public static final Duration DEFAULT_INITIAL_BACKOFF = Duration.ofSeconds(1);
    /** Default {@link #maxBackoff}: 30 s. */
    public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(30);
    /** Default {@link #backoffJitter}: {@value}. */
    public static final double DEFAULT_BACKOFF_JITTER = 0.2;
    /** Default {@link #discoveryInterval}: 5 s. */
    public static final Duration DEFAULT_DISCOVERY_INTERVAL = Duration.ofSeconds(5);
    /** Default {@link #actionTimeout}: 60 s (waking a large model takes a while). */
    public static final Duration DEFAULT_ACTION_TIMEOUT = Duration.ofSeconds(60);

    private final List<ReplicaEndpoint> endpoints = new ArrayList<>();
    private @Nullable ReplicaDiscovery discovery;
    private @Nullable HttpClient httpClient;
    private Duration scrapeInterval = DEFAULT_SCRAPE_INTERVAL;
    private Duration scrapeTimeout = DEFAULT_SCRAPE_TIMEOUT;
    private String metricsPath = DEFAULT_METRICS_PATH;
    private int maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES;
    private int failuresToUnhealthy = DEFAULT_FAILURES_TO_UNHEALTHY;
    private Duration initialBackoff = DEFAULT_INITIAL_BACKOFF;
    private Duration maxBackoff = DEFAULT_MAX_BACKOFF;
    private double backoffJitter = DEFAULT_BACKOFF_JITTER;
    private Duration discoveryInterval = DEFAULT_DISCOVERY_INTERVAL;
    private Duration actionTimeout = DEFAULT_ACTION_TIMEOUT;
    private boolean probeSleepState;
    private LongSupplier ticker = System::nanoTime;
    private InstantSource clock = InstantSource.system();
    private DoubleSupplier random = () -> java.util.concurrent.ThreadLocalRandom.current()
        .nextDouble();

    private Builder() {}

    /** Adds a replica from configuration (a fixed list; not combinable with a discovery). */
    public Builder endpoint(ReplicaEndpoint endpoint) {
      endpoints.add(Objects.requireNonNull(endpoint, "endpoint"));
      return this;
    }

    /** Adds replicas from configuration, in order. */
    public Builder endpoints(Collection<ReplicaEndpoint> endpoints) {
      endpoints.forEach(this::endpoint);
      return this;
    }

    /** Takes the replicas from {@code discovery} (polled and watched; not closed by the view). */
    public Builder discovery(ReplicaDiscovery discovery) {
      this.discovery = Objects.requireNonNull(discovery, "discovery");
      return this;
    }

    /**
     * Sends scrapes and actions with {@code client} (owned by the caller; its executor runs the
     * answers' handling). Default: a client of the view's own, HTTP/1.1, following redirects
     * ({@link HttpClient.Redirect#NORMAL}, as Prometheus does), connect timeout = the scrape
     * timeout, on a daemon executor shut down by {@link FleetView#close()}.
     */
    public Builder httpClient(HttpClient client) {
      this.httpClient = Objects.requireNonNull(client, "httpClient");
      return this;
    }

    /** Time between two scrape rounds; {@code > 0}. */
    public Builder scrapeInterval(Duration interval) {
      this.scrapeInterval = Checks.positive(interval, "scrapeInterval");
      return this;
    }

    /** How long one scrape may take before it counts as timed out; {@code > 0}. */
    public Builder scrapeTimeout(Duration timeout) {
      this.scrapeTimeout = Checks.positive(timeout, "scrapeTimeout");
      return this;
    }

    /** The metrics path under each base URL; starts with {@code /}. */
    public Builder metricsPath(String path) {
      Objects.requireNonNull(path, "metricsPath");
      if (!path.startsWith("/") || path.contains("#")) {
        throw new IllegalArgumentException(
            "metricsPath: '" + path + "' (expected: a path starting with /)");
      }
      this.metricsPath = path;
      return this;
    }

    /**
     * The most bytes read of an engine's answer ({@code /metrics}, {@code /is_sleeping}, sleep and
     * wake-up): past it the exchange is cut and counts as a failed scrape or action, so an engine
     * answering hundreds of megabytes costs the gateway at most this much memory.
     */
    public Builder maxResponseBytes(int bytes) {
      this.maxResponseBytes = Checks.positive(bytes, "maxResponseBytes");
      return this;
    }

    /**
     * Failed scrapes in a row (timeouts, non-200 answers, bodies without engine metrics) that make
     * a replica unhealthy; {@code > 0}. A refused connection counts at once.
     */
    public Builder failuresToUnhealthy(int failures) {
      this.failuresToUnhealthy = Checks.positive(failures,
          "failuresToUnhealthy");
      return this;
    }

    /** The first re-probe delay of an unhealthy replica; {@code > 0}. */
    public Builder initialBackoff(Duration backoff) {
      this.initialBackoff = Checks.positive(backoff, "initialBackoff");
      return this;
    }

    /** The longest re-probe delay; {@code >= initialBackoff} (checked by {@link #build()}). */
    public Builder maxBackoff(Duration backoff) {
      this.maxBackoff = Checks.positive(backoff, "maxBackoff");
      return this;
    }

    /** The spread of each delay, a fraction in {@code [0, 1)}; {@code 0} is deterministic. */
    public Builder backoffJitter(double jitter) {
      if (!(jitter >= 0 && jitter < 1)) {
        throw new IllegalArgumentException("backoffJitter: " + jitter + " (expected: 0 <= x < 1)");
      }
      this.backoffJitter = jitter;
      return this;
    }

    /** Time between two polls of the discovery; {@code > 0}. */
    public Builder discoveryInterval(Duration interval) {
      this.discoveryInterval = Checks.positive(interval,
          "discoveryInterval");
      return this;
    }

    /** How long a sleep-mode action may take; {@code > 0}. */
    public Builder actionTimeout(Duration timeout) {
      this.actionTimeout = Checks.positive(timeout, "actionTimeout");
      return this;
    }

    /**
     * Whether to ask vLLM's {@code GET /is_sleeping} alongside each scrape (for servers whose
     * metrics lack {@code vllm:engine_sleep_state}); off by default. A server answering 404 (no dev
     * mode) is not asked again; SGLang never is.
     */
    public Builder probeSleepState(boolean probe) {
      this.probeSleepState = probe;
      return this;
    }

    /** The monotonic clock of backoffs and output rates, in nanoseconds (e.g. a fake in tests). */
    public Builder ticker(LongSupplier nanoTime) {
      this.ticker = Objects.requireNonNull(nanoTime, "ticker");
      return this;
    }

    /** The wall clock of replicas' ready-since times. */
    public Builder clock(InstantSource clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /** The random source of the backoff jitter, values in {@code [0, 1)}. */
    public Builder random(DoubleSupplier random) {
      this.random = Objects.requireNonNull(random, "random");
      return this;
    }

    /**
     * Returns the fleet view, not started (see {@link FleetView#start()}); every endpoint is
     * tracked, unhealthy until scraped.
     *
     * @throws IllegalStateException if both endpoints and a discovery are set, or neither
     * @throws IllegalArgumentException if {@code maxBackoff < initialBackoff}
     */
    public FleetView build() {
      if (discovery != null && !endpoints.isEmpty()) {
        throw new IllegalStateException(
            "endpoints: " + endpoints.size() + " set with a discovery (expected: one of them)");
      }
      if (discovery == null && endpoints.isEmpty()) {
        throw new IllegalStateException(
            "endpoints: none (expected: endpoint(...) or discovery(...))");
      }
      if (maxBackoff.compareTo(initialBackoff) < 0) {
        throw new IllegalArgumentException("maxBackoff: " + maxBackoff
            + " (expected: >= initialBackoff " + initialBackoff + ")");
      }
      ReplicaDiscovery d = discovery != null ? discovery : ReplicaDiscovery.fixed(endpoints);
      return new FleetView(new FleetSettings(d, discovery != null ? List.of() : List.copyOf(endpoints),
          httpClient, scrapeInterval, scrapeTimeout, metricsPath, maxResponseBytes,
          failuresToUnhealthy,
          initialBackoff, maxBackoff, backoffJitter, discoveryInterval, actionTimeout,
          probeSleepState, ticker, clock, random));
    }
  }
}
