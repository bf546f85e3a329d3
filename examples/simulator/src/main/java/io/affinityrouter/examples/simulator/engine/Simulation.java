package io.affinityrouter.examples.simulator.engine;

import io.affinityrouter.ModelState;
import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.examples.simulator.fleet.KvCache;
import io.affinityrouter.examples.simulator.fleet.ReplicaEngine;
import io.affinityrouter.examples.simulator.fleet.Sequence;
import io.affinityrouter.examples.simulator.strategy.Route;
import io.affinityrouter.examples.simulator.strategy.RoutingStrategy;
import io.affinityrouter.examples.simulator.strategy.StrategyContext;
import io.affinityrouter.examples.simulator.strategy.StrategyRegistry;
import io.affinityrouter.examples.simulator.workload.SegmentKeys;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import io.affinityrouter.examples.simulator.workload.Workload;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;

/**
 * A discrete-event simulation of one strategy on one workload: gateways route arriving requests
 * with their own strategy instances, replicas run engine steps ({@link ReplicaEngine}), loads reach
 * the gateways by periodic scrapes, follow-up turns arrive after their think time, and the fleet may
 * change ({@link FleetEvent}). Everything runs on simulated time; the result depends only on the
 * workload, the configuration and the seed.
 *
 * <p>Each gateway receives a request by a hash of the seed and the request id (a load balancer in
 * front of the gateways), so a session's turns may reach different gateways; with
 * {@link SimulationConfig.Front#SESSION} by a hash of the seed and the session id instead, so they
 * all reach one. Not thread-safe: one instance per run, run once.
 */
public final class Simulation implements ReplicaEngine.Listener {
  private static final int ARRIVAL = 0;
  private static final int STEP = 1;
  private static final int SCRAPE = 2;
  private static final int FLEET = 3;
  private static final int WAKE = 4;
  private static final int WAKE_REQUEST = 5;
  private static final int RELEASE = 6;
  private static final int ADMITTED = 7;
  private static final int TIMER = 8;
  /**
   * How long a refused request's client waits before sending it again: the Retry-After both the
   * router and GIE's flow control answer with, 1 s.
   */
  static final long CLIENT_RETRY_AFTER_NANOS = 1_000_000_000L;
  /** How many times a client sends a refused request again: the OpenAI SDKs' default, 2. */
  static final int CLIENT_RETRIES = 2;
  /** The model every replica hosts (its state is what the asleep scenario changes). */
  public static final String MODEL = "qwen2.5-7b-instruct";

  private record Event(long time, long seq, int kind, int replica, Object payload)
      implements Comparable<Event> {
    @Override
    public int compareTo(Event o) {
      int c = Long.compare(time, o.time);
      return c != 0 ? c : Long.compare(seq, o.seq);
    }
  }

  private static final class Job {
    final SimRequest request;
    final long arrival;
    final int gateway;
    Route route;
    boolean bounded;
    long boundTokens;
    boolean firstTokenSeen;
    boolean wasHeld;
    long firstTokenNanos;
    boolean dispatched;
    boolean otherGateway;
    int retries;
    @Nullable Route admitted;

    Job(SimRequest request, long arrival, int gateway) {
      this.request = request;
      this.arrival = arrival;
      this.gateway = gateway;
    }
  }

  private final Workload workload;
  private final StrategyRegistry.Entry entry;
  private final SimulationConfig config;
  private final Consumer<String> progress;
  private final SimClock clock = new SimClock();
  private final PriorityQueue<Event> events = new PriorityQueue<>();
  private final ReplicaEngine[] engines;
  private final boolean[] live;
  private final long[] readyNanos;
  private final ModelState[] modelState;
  private final long[] awakeAt;
  private long wakes;
  private final Map<String, Integer> indexById = new HashMap<>();
  private final RoutingStrategy[] strategies;
  private final GatewayView[] views;
  private final int[][] inFlight;
  private final long[] generatedAtLastScrape;
  private final Set<Long> seen = new HashSet<>();
  private final Map<String, Integer> lastReplica = new HashMap<>();
  private final Map<String, Long> moves = new TreeMap<>();
  private final Map<String, Integer> lastGateway = new HashMap<>();
  private final Map<String, Long> repinsByCause = new TreeMap<>();
  private long crossGatewayTurns;
  private long gaveUpNew;
  private long gaveUpReturning;
  private final Histogram ttft = new Histogram(3);
  private final Histogram ttftFloor = new Histogram(3);
  private final Histogram e2e = new Histogram(3);
  private final List<int[]> loadSeries = new ArrayList<>();
  private final ArrayDeque<Job>[] held;
  private final boolean[] releasePending;
  private final Map<String, long[]> sessionTtfts = new HashMap<>();
  private final long scrapeNanos;
  private long heldRequests;
  private List<Replica> replicas = List.of();
  private long seq;
  private int completed;
  private int dropped;
  private int remaining;
  private long notRouted;
  private long failedOver;
  private long repins;
  private long inputTokens;
  private long cachedTokens;
  private long boundTokens;
  private long recomputed;
  private long outputTokens;
  private long firstArrival = Long.MAX_VALUE;
  private long lastCompletion;
  private final Map<Long, Long> floorNanos = new HashMap<>();
  private long decodeNanos;
  private long decodedTokens;
  private long wallStart;
  private long lastProgress;

  private Simulation(Workload workload, StrategyRegistry.Entry entry, SimulationConfig config,
      Consumer<String> progress) {
    this.workload = workload;
    this.entry = entry;
    this.config = config;
    this.progress = progress;
    this.scrapeNanos = entry.scrapeNanos() > 0 ? entry.scrapeNanos() : config.scrapeIntervalNanos();
    int n = config.replicas();
    engines = new ReplicaEngine[n];
    KvCache shared = entry.infiniteCache() ? KvCache.infinite() : null;
    for (int i = 0; i < n; i++) {
      KvCache cache = shared != null ? shared
          : new KvCache(config.engine().kvBlocks(), config.engine().prefixCaching());
      engines[i] = new ReplicaEngine(i, config.engine(), cache);
      String id = replicaId(i);
      if (shared == null) {
        cache.onEviction(key -> segmentEvicted(id, key));
      }
      indexById.put(replicaId(i), i);
    }
    live = new boolean[n];
    readyNanos = new long[n];
    generatedAtLastScrape = new long[n];
    modelState = new ModelState[n];
    awakeAt = new long[n];
    for (int i = 0; i < n; i++) {
      live[i] = i < config.initiallyReady();
      boolean sleeping = i < config.initiallyReady()
          && i >= config.initiallyReady() - config.asleep();
      modelState[i] = sleeping ? ModelState.SLEEPING : ModelState.ACTIVE;
    }
    StrategyContext context = new StrategyContext(config.seed(), clock, config.gateways());
    context.scheduler().runWith((at, task) -> push(Math.max(at, clock.nanos()), TIMER, -1, task));
    context.onWakeRequest(id -> {
      Integer idx = indexById.get(id);
      if (idx != null) { // after the current event: the router is still deciding
        push(clock.nanos(), WAKE_REQUEST, idx, null);
      }
    });
    strategies = new RoutingStrategy[config.gateways()];
    for (int g = 0; g < strategies.length; g++) {
      strategies[g] = entry.factory().create(context, g);
    }
    inFlight = new int[config.gateways()][n];
    @SuppressWarnings("unchecked")
    ArrayDeque<Job>[] queues = new ArrayDeque[config.gateways()];
    held = queues;
    releasePending = new boolean[config.gateways()];
    for (int g = 0; g < held.length; g++) {
      held[g] = new ArrayDeque<>();
    }
    views = new GatewayView[config.gateways()];
    for (int g = 0; g < views.length; g++) {
      views[g] = new GatewayView(clock, engines, config.engine(), indexById, inFlight[g],
          readyNanos);
    }
  }

  private void segmentEvicted(String replicaId, long key) {
    for (RoutingStrategy s : strategies) {
      s.onSegmentEvicted(replicaId, key);
    }
  }

  /** The id of the replica with fleet index {@code index}. */
  public static String replicaId(int index) {
    return "replica-" + index;
  }

  /**
   * Runs the strategy on the workload.
   *
   * @param progress receives a line now and then during long runs (e.g. to print on stderr)
   */
  public static RunResult run(Workload workload, StrategyRegistry.Entry entry,
      SimulationConfig config, Consumer<String> progress) {
    return new Simulation(workload, entry, config, progress).run();
  }

  private RunResult run() {
    wallStart = System.nanoTime();
    lastProgress = wallStart;
    remaining = workload.size();
    push(0, SCRAPE, -1, null);
    for (FleetEvent e : config.events()) {
      push(e.atNanos(), FLEET, e.replica(), e);
    }
    for (SimRequest h : workload.heads()) {
      push(h.delayNanos(), ARRIVAL, -1, new Job(h, h.delayNanos(), gatewayFor(h)));
    }
    Event e;
    while ((e = events.poll()) != null) {
      clock.set(e.time());
      switch (e.kind()) {
        case ARRIVAL -> arrive((Job) e.payload());
        case STEP -> step(e.replica());
        case SCRAPE -> scrape();
        case WAKE -> awake(e.replica());
        case WAKE_REQUEST -> wake(e.replica());
        case RELEASE -> {
          releasePending[e.replica()] = false;
          release(e.replica());
        }
        case ADMITTED -> admitted((Job) e.payload());
        case TIMER -> ((Runnable) e.payload()).run();
        default -> fleetEvent((FleetEvent) e.payload());
      }
    }
    long[] busy = new long[engines.length];
    long preemptions = 0;
    long recomputedAfterPreemption = 0;
    for (int i = 0; i < engines.length; i++) {
      busy[i] = engines[i].busyNanos();
      preemptions += engines[i].preemptions();
      recomputedAfterPreemption += engines[i].recomputedTokens();
    }
    return new RunResult(entry.name(), workload.name(), workload.size(), completed, dropped,
        notRouted, failedOver, inputTokens, cachedTokens, boundTokens,
        recomputed + recomputedAfterPreemption, outputTokens, ttft, ttftFloor, e2e,
        Math.max(0, lastCompletion - firstArrival), busy,
        Collections.unmodifiableMap(new TreeMap<>(moves)), repins,
        List.copyOf(loadSeries), scrapeNanos, wakes, preemptions,
        idealRequestsPerSecond(), sessionP90s(), heldRequests, config.gateways(), config.front(),
        Collections.unmodifiableMap(new TreeMap<>(repinsByCause)), crossGatewayTurns, gaveUpNew,
        gaveUpReturning);
  }

  private int gatewayFor(SimRequest r) {
    if (config.front() == SimulationConfig.Front.SESSION && r.session() != null) {
      long h = SegmentKeys.mix(config.seed() ^ SegmentKeys.mix(r.session().hashCode()));
      return (int) Long.remainderUnsigned(h, config.gateways());
    }
    return (int) Long.remainderUnsigned(SegmentKeys.mix(config.seed() ^ (r.id() * 0x9E37L)),
        config.gateways());
  }

  private void push(long time, int kind, int replica, Object payload) {
    events.add(new Event(time, seq++, kind, replica, payload));
  }

  private void arrive(Job job) {
    long now = clock.nanos();
    SimRequest r = job.request;
    if (!job.bounded) {
      job.bounded = true;
      firstArrival = Math.min(firstArrival, job.arrival);
      long[] keys = r.keys();
      int i = 0;
      while (i < keys.length && seen.contains(keys[i])) {
        i++;
      }
      job.boundTokens = r.cachedTokensOf(i);
      for (long k : keys) {
        seen.add(k);
      }
    }
    if (replicas.isEmpty()) {
      push(now + config.retryNanos(), ARRIVAL, -1, job);
      return;
    }
    int g = job.gateway;
    if (!held[g].isEmpty()) { // first come, first served: behind what this gateway holds
      hold(job);
      return;
    }
    Route route = strategies[g].route(r, views[g], job.retries);
    if (route == null) {
      refused(job);
      return;
    }
    if (route.held()) {
      hold(job);
      return;
    }
    if (route.deferred()) {
      defer(job, route);
      return;
    }
    dispatch(job, route);
  }

  /** The strategy's own queue holds the request: it is dispatched (or refused) when that says. */
  private void defer(Job job, Route route) {
    if (!job.wasHeld) {
      job.wasHeld = true;
      heldRequests++;
    }
    route.later().whenComplete((admitted, ex) -> {
      if (ex != null) {
        throw new IllegalStateException(entry.name() + " failed a held request", ex);
      }
      job.admitted = admitted;
      push(clock.nanos(), ADMITTED, -1, job); // after the event that admitted it
    });
  }

  private void admitted(Job job) {
    Route route = job.admitted;
    job.admitted = null;
    if (route == null) {
      refused(job);
    } else if (route.replicaIndex() < 0 || !live[route.replicaIndex()]) {
      if (route.lease() != null) {
        route.lease().close();
      }
      push(clock.nanos() + config.retryNanos(), ARRIVAL, -1, job); // its replica left meanwhile
    } else {
      dispatch(job, route);
    }
  }

  /**
   * A refused request (a 429): its client sends it again after the Retry-After, at most
   * {@value #CLIENT_RETRIES} times; then gives up on it and on the rest of its session.
   */
  private void refused(Job job) {
    notRouted++;
    if (job.retries < CLIENT_RETRIES) {
      job.retries++;
      push(clock.nanos() + CLIENT_RETRY_AFTER_NANOS, ARRIVAL, -1, job);
      return;
    }
    String session = job.request.session();
    if (session != null && lastGateway.containsKey(session)) { // an earlier turn was dispatched
      gaveUpReturning++;
    } else {
      gaveUpNew++;
    }
    for (SimRequest r = job.request; r != null; r = r.next()) {
      dropped++; // never served: its client gave up
      remaining--;
    }
  }

  private void hold(Job job) {
    if (!job.wasHeld) {
      job.wasHeld = true;
      heldRequests++;
    }
    held[job.gateway].addLast(job);
  }

  /** Offers gateway {@code g}'s held requests again, oldest first, until one is held still. */
  private void release(int g) {
    ArrayDeque<Job> queue = held[g];
    while (!queue.isEmpty() && !replicas.isEmpty()) {
      Job job = queue.peekFirst();
      Route route = strategies[g].route(job.request, views[g], job.retries);
      if (route == null) {
        queue.pollFirst();
        refused(job);
        continue;
      }
      if (route.held()) {
        return;
      }
      queue.pollFirst();
      if (route.deferred()) {
        defer(job, route);
      } else {
        dispatch(job, route);
      }
    }
  }

  private void dispatch(Job job, Route route) {
    SimRequest r = job.request;
    int g = job.gateway;
    int idx = route.replicaIndex();
    if (idx < 0 || idx >= engines.length || !live[idx]) {
      throw new IllegalStateException(entry.name() + " picked replica " + idx
          + " which is not ready");
    }
    job.route = route;
    if (!job.dispatched) { // a retried turn keeps the gateway of the session's previous turn
      job.dispatched = true;
      if (r.session() != null) {
        Integer prev = lastGateway.put(r.session(), g);
        job.otherGateway = prev != null && prev != g;
        if (job.otherGateway) {
          crossGatewayTurns++;
        }
      }
    }
    if (route.repin()) {
      repins++;
      String reason = route.reason();
      String cause = reason.substring(reason.indexOf('/') + 1);
      repinsByCause.merge(cause + "/" + (job.otherGateway ? RunResult.OTHER_GATEWAY
          : RunResult.SAME_GATEWAY), 1L, Long::sum);
    }
    if (r.session() != null) {
      Integer prev = lastReplica.put(r.session(), idx);
      if (prev != null && prev != idx) {
        moves.merge(route.reason(), 1L, Long::sum);
      }
    }
    inFlight[g][idx]++;
    engines[idx].submit(new Sequence(r, config.engine(), job));
    wake(idx); // a request reached a sleeping model: the engine wakes it, then serves
    kick(idx);
  }

  /** Starts waking replica {@code idx}'s model if it sleeps. */
  private void wake(int idx) {
    if (live[idx] && modelState[idx] == ModelState.SLEEPING) {
      modelState[idx] = ModelState.LOADING;
      awakeAt[idx] = clock.nanos() + config.wakeNanos();
      wakes++;
      push(awakeAt[idx], WAKE, idx, null);
      rebuildReplicas(false);
    }
  }

  private void awake(int idx) {
    modelState[idx] = ModelState.ACTIVE;
    rebuildReplicas(false);
    kick(idx);
  }

  private void kick(int idx) {
    ReplicaEngine engine = engines[idx];
    if (modelState[idx] == ModelState.ACTIVE && !engine.isStepping()) {
      long d = engine.startStep();
      if (d > 0) {
        push(clock.nanos() + d, STEP, idx, null);
      }
    }
  }

  private void step(int idx) {
    if (!live[idx]) {
      return;
    }
    engines[idx].finishStep(clock.nanos(), this);
    kick(idx);
    if (System.nanoTime() - lastProgress > 5_000_000_000L) {
      lastProgress = System.nanoTime();
      progress.accept(String.format("  %s on %s: %d/%d requests done, %.0f s simulated",
          entry.name(), workload.name(), completed, workload.size(), clock.nanos() / 1e9));
    }
  }

  @Override
  public void onFirstToken(ReplicaEngine engine, Sequence s, long nowNanos) {
    Job job = (Job) s.attachment();
    strategies[job.gateway].onFirstToken(job.request, job.route);
    String id = replicaId(engine.index());
    for (RoutingStrategy strategy : strategies) {
      strategy.onPrefixStored(id, job.request, s.cachedTokens(), job.request.inputTokens());
    }
    if (job.firstTokenSeen) {
      return;
    }
    job.firstTokenSeen = true;
    long micros = Math.max(1, (nowNanos - job.arrival) / 1000);
    ttft.recordValue(micros);
    String session = job.request.session() != null ? job.request.session()
        : "#" + job.request.id();
    long[] list = sessionTtfts.get(session);
    if (list == null || list[0] + 1 == list.length) {
      long[] grown = new long[list == null ? 4 : list.length * 2];
      if (list != null) {
        System.arraycopy(list, 0, grown, 0, list.length);
      }
      sessionTtfts.put(session, grown);
      list = grown;
    }
    list[(int) ++list[0]] = micros; // list[0] counts the entries after it
    long input = job.request.inputTokens();
    long floorMicros = Math.max(1, (long) config.engine().cost().prefillFloorMicros(
        input - job.boundTokens, job.boundTokens, config.engine().maxBatchedTokens()));
    ttftFloor.recordValue(floorMicros);
    floorNanos.put(job.request.id(), floorMicros * 1000);
    job.firstTokenNanos = nowNanos;
    inputTokens += input;
    cachedTokens += s.cachedTokens();
    boundTokens += job.boundTokens;
    recomputed += Math.max(0, job.boundTokens - s.cachedTokens());
  }

  @Override
  public void onFinished(ReplicaEngine engine, Sequence s, long nowNanos) {
    Job job = (Job) s.attachment();
    completed++;
    outputTokens += s.generated();
    if (s.generated() > 1) {
      decodeNanos += nowNanos - job.firstTokenNanos;
      decodedTokens += s.generated() - 1;
    }
    e2e.recordValue(Math.max(1, (nowNanos - job.arrival) / 1000));
    lastCompletion = Math.max(lastCompletion, nowNanos);
    SimRequest next = job.request.next();
    if (job.request.hasAnswerSegment() && next != null) {
      seen.add(job.request.answerKey());
      String id = replicaId(engine.index());
      int from = job.request.inputTokens();
      for (RoutingStrategy strategy : strategies) {
        strategy.onPrefixStored(id, next, from, from + job.request.outputTokens());
      }
    }
    end(job, s.generated());
  }

  @Override
  public void onRejected(ReplicaEngine engine, Sequence s, long nowNanos) {
    dropped++;
    end((Job) s.attachment(), 0);
  }

  private void end(Job job, int generated) {
    inFlight[job.gateway][job.route.replicaIndex()]--;
    strategies[job.gateway].onFinished(job.request, job.route, generated);
    remaining--;
    SimRequest next = job.request.next();
    if (next != null) {
      long at = clock.nanos() + next.delayNanos();
      push(at, ARRIVAL, -1, new Job(next, at, gatewayFor(next)));
    }
    if (!held[job.gateway].isEmpty() && !releasePending[job.gateway]) {
      releasePending[job.gateway] = true; // after the engine's step: routing may submit to it
      push(clock.nanos(), RELEASE, job.gateway, null);
    }
  }

  /**
   * The rate at which the same requests would have been served had none waited for its first
   * token beyond its floor and had every one decoded at the run's mean pace: each takes its TTFT
   * floor plus its output at the fleet's mean time per output token, a follow-up turn arrives its
   * think time after the turn before it ends; requests over the span from the first arrival to the
   * last end. Against it the served rate shows load not served: a closed loop whose turns wait for
   * a queue, a recomputation or a replica decoding slower than the fleet sends fewer of them, and a
   * run whose last requests wait ends late. The fleet's own decode pace stays in the reference: a
   * router does not set it, and on long contexts its growth with the batch alone stretches
   * sessions by more than the 5% a capacity run allows.
   */
  private double idealRequestsPerSecond() {
    double perToken = decodedTokens == 0 ? 0 : (double) decodeNanos / decodedTokens;
    long first = Long.MAX_VALUE;
    long last = Long.MIN_VALUE;
    for (SimRequest h : workload.heads()) {
      first = Math.min(first, h.delayNanos());
      long t = h.delayNanos();
      for (SimRequest r = h; r != null; r = r.next()) {
        if (r != h) {
          t += r.delayNanos();
        }
        t += floorNanos.getOrDefault(r.id(), 0L) + (long) (perToken * (r.outputTokens() - 1));
      }
      last = Math.max(last, t);
    }
    return last <= first ? Double.POSITIVE_INFINITY : workload.size() / ((last - first) / 1e9);
  }

  /** Each session's p90 TTFT (nearest rank), µs; a request without a session is one of its own. */
  private long[] sessionP90s() {
    long[] out = new long[sessionTtfts.size()];
    int i = 0;
    for (long[] list : sessionTtfts.values()) {
      int n = (int) list[0];
      long[] values = java.util.Arrays.copyOfRange(list, 1, n + 1);
      java.util.Arrays.sort(values);
      out[i++] = values[(int) Math.ceil(0.9 * n) - 1];
    }
    java.util.Arrays.sort(out);
    return out;
  }

  private void scrape() {
    long now = clock.nanos();
    rebuildReplicas(true);
    int[] sample = new int[engines.length];
    for (int i = 0; i < engines.length; i++) {
      sample[i] = live[i] ? engines[i].runningCount() + engines[i].waitingCount() : -1;
    }
    loadSeries.add(sample);
    for (int g = 0; g < held.length; g++) {
      strategies[g].onScrape(views[g]);
      release(g);
    }
    if (remaining > 0) {
      push(now + scrapeNanos, SCRAPE, -1, null);
    }
  }

  private void rebuildReplicas(boolean scraped) {
    List<Replica> out = new ArrayList<>();
    double seconds = scrapeNanos / 1e9;
    for (int i = 0; i < engines.length; i++) {
      ReplicaEngine e = engines[i];
      long generated = e.generatedTokens();
      ReplicaLoad load;
      @Nullable Replica previous = scraped ? null : findReplica(i);
      if (previous != null) {
        load = previous.load();
      } else {
        load = ReplicaLoad.builder().runningRequests(e.runningCount())
            .waitingRequests(e.waitingCount()).kvUsage(e.kvUsage())
            .kvCapacityTokens(config.engine().kvCapacityTokens())
            .kvWrittenTokens(e.prefilledTokens() + generated)
            .outputTokensPerSecond((generated - generatedAtLastScrape[i]) / seconds).build();
      }
      if (scraped) {
        generatedAtLastScrape[i] = generated;
      }
      if (live[i]) {
        out.add(Replica.builder(replicaId(i)).readySince(SimClock.instantAt(readyNanos[i]))
            .model(MODEL, modelState[i]).load(load).build());
      }
    }
    replicas = List.copyOf(out);
    for (GatewayView v : views) {
      v.replicas(replicas);
    }
  }

  private @Nullable Replica findReplica(int index) {
    String id = replicaId(index);
    for (Replica r : replicas) {
      if (r.id().equals(id)) {
        return r;
      }
    }
    return null;
  }

  private void fleetEvent(FleetEvent e) {
    int idx = e.replica();
    if (e.kind() == FleetEvent.Kind.READY) {
      live[idx] = true;
      readyNanos[idx] = clock.nanos();
    } else {
      live[idx] = false;
      for (RoutingStrategy strategy : strategies) {
        strategy.onReplicaCleared(replicaId(idx));
      }
      for (Sequence s : engines[idx].drainAll()) {
        Job job = (Job) s.attachment();
        failedOver++;
        inFlight[job.gateway][idx]--;
        strategies[job.gateway].onFinished(job.request, job.route, s.generated());
        push(clock.nanos() + config.retryNanos(), ARRIVAL, -1, job);
      }
    }
    rebuildReplicas(false);
  }
}
