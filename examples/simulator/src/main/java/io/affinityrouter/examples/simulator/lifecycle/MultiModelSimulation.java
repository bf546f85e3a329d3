package io.affinityrouter.examples.simulator.lifecycle;

import io.affinityrouter.ModelState;
import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.RequestLease;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.core.lifecycle.LifecycleAction;
import io.affinityrouter.core.lifecycle.ModelActuator;
import io.affinityrouter.core.lifecycle.ModelClaim;
import io.affinityrouter.core.lifecycle.ModelLifecycle;
import io.affinityrouter.examples.simulator.engine.RunResult;
import io.affinityrouter.examples.simulator.engine.SimulationConfig;
import io.affinityrouter.examples.simulator.fleet.EngineConfig;
import io.affinityrouter.examples.simulator.fleet.KvCache;
import io.affinityrouter.examples.simulator.fleet.ReplicaEngine;
import io.affinityrouter.examples.simulator.fleet.Sequence;
import io.affinityrouter.examples.simulator.lifecycle.MultiModelWorkload.Arrival;
import io.affinityrouter.examples.simulator.lifecycle.MultiModelWorkload.ModelSpec;
import io.affinityrouter.examples.simulator.workload.SegmentKeys;
import io.affinityrouter.spi.RoutingListener;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;

/**
 * A discrete-event simulation of a multi-model fleet: GPUs, each running one vLLM-like engine
 * ({@link ReplicaEngine}) per model it hosts, the real router ({@link AffinityRouter}) in front,
 * and, in {@link Mode#LIFECYCLE}, the real {@link ModelLifecycle} deciding which engines sleep and
 * wake, on simulated time.
 *
 * <p><b>The GPU.</b> An H100-80GB at vLLM's 0.9 memory utilisation: {@value #USABLE_GIB} GiB, of
 * which an awake engine of a 7B model takes {@value #ENGINE_FIXED_GIB} GiB for its weights and
 * activations ({@link EngineConfig#DEFAULT_KV_BLOCKS} KV blocks = 57.8 GiB is what is left for a lone
 * engine). Two engines are awake on a GPU at most ({@value #SLOTS_PER_GPU} slots); with
 * <b>stock vLLM</b> each gets a fixed KV pool of half the GPU ({@code gpu_memory_utilization} 0.45:
 * {@link #SHARE_BLOCKS} blocks), whatever its neighbours do; with <b>elastic KV</b> (kvcached-like)
 * the KV left by the awake engines' weights is split evenly among them, so an engine alone on its
 * GPU has the lone engine's {@link EngineConfig#DEFAULT_KV_BLOCKS} blocks, and shrinks back to its
 * half (evicting its cached prefixes; waiting for running requests if need be, the neighbour's wake
 * waits with it) when a neighbour wakes. Engines on one GPU share its compute: their steps run one
 * at a time, in the order they are ready (CUDA time-slices the processes of several engines).
 *
 * <p><b>Sleep and wake.</b> A sleep (level 1) stops new requests at once (the engine is reported
 * {@link ModelState#SLEEPING}), lets the requests in it finish (vLLM's {@code mode=wait}), then
 * takes {@link Config#sleepNanos()}; its memory is held until then. A wake reports
 * {@link ModelState#LOADING} for {@link Config#wakeNanos()}, then a fresh engine with an empty KV
 * cache ({@code sleep} discards it) serves as {@link ModelState#ACTIVE}. The actuator's answers
 * complete then, on the simulation clock.
 *
 * <p><b>Requests.</b> Each is routed by the real router with its model; one that finds no awake copy
 * ({@code MODEL_WAKING}, {@code MODEL_LOADING}) waits at the gateway and is offered again as soon as
 * a copy of its model turns active, or else at the router's Retry-After; its TTFT counts from its
 * arrival. The lifecycle runs a round every simulated second, on every wake request and after every
 * action's answer (as a {@link ModelLifecycle#start() started} one does).
 *
 * <p>Not thread-safe: one instance per run, run once.
 */
public final class MultiModelSimulation {
  /** Memory vLLM may use on an H100-80GB at its default 0.9 utilisation, GiB: {@value}. */
  public static final double USABLE_GIB = 72;
  /** An awake 7B engine's weights (BF16, 14.2 GiB) and activations, GiB: {@value}. */
  public static final double ENGINE_FIXED_GIB = 14.2;
  /** Awake engines per GPU at most: {@value}. */
  public static final int SLOTS_PER_GPU = 2;
  /** KV blocks per GiB: {@link EngineConfig#DEFAULT_KV_BLOCKS} over the lone engine's 57.8 GiB. */
  static final double BLOCKS_PER_GIB = EngineConfig.DEFAULT_KV_BLOCKS
      / (USABLE_GIB - ENGINE_FIXED_GIB);
  /** The stock KV pool of an engine started with half the GPU: 21.8 GiB, 25,519 blocks. */
  public static final long SHARE_BLOCKS = kvBlocks(SLOTS_PER_GPU);
  /** The claim of every model: half the GPU's usable memory, bytes. */
  public static final long CLAIM_BYTES = (long) (USABLE_GIB / SLOTS_PER_GPU * (1L << 30));
  /** The lifecycle's memory of one GPU group, bytes. */
  public static final long GROUP_BYTES = CLAIM_BYTES * SLOTS_PER_GPU;

  /**
   * Level-1 wake of a 7B BF16 model, seconds: {@value}. The vLLM blog "Zero-Reload Model Switching
   * with vLLM Sleep Mode" (blog.vllm.ai/2025/10/26/sleep-mode.html, A100, vLLM 0.11.0) measured a
   * level-1 wake of 0.26 s for Qwen3-0.6B and 0.82-0.90 s for Phi-3-vision (4.2B, 8.4 GB BF16),
   * "~3-6 s for large models"; scaled by weight bytes (14.2 GiB for 7B, 1.8× Phi-3-vision's) the 7B
   * wake is about 1.6 s.
   */
  public static final double WAKE_L1_SECONDS = 1.6;
  /**
   * Level-1 sleep, seconds: {@value}. The blog gives no sleep time; a level-1 sleep copies the same
   * weights the other way (GPU to pinned CPU memory), taken here as long as the wake.
   */
  public static final double SLEEP_L1_SECONDS = 1.6;
  /**
   * Level-2 wake (weights reloaded from disk), seconds, for reference (the claims use level 1):
   * {@value}: the blog's 0.85 s (Qwen3-0.6B) and 2.58 s (Phi-3-vision), scaled as above.
   */
  public static final double WAKE_L2_SECONDS = 4.7;

  private static final int ARRIVAL = 0;
  private static final int STEP = 1;
  private static final int SCRAPE = 2;
  private static final int TICK = 3;
  private static final int ROUND = 4;
  private static final int WAKE_DONE = 5;
  private static final int SLEEP_DONE = 6;
  private static final int RETRY = 7;
  private static final int DRAIN = 8;
  private static final long SCRAPE_NANOS = 100_000_000L;
  private static final long TICK_NANOS = 1_000_000_000L;
  /** How long after the last arrival the run goes on at most for requests still waiting. */
  private static final long GRACE_NANOS = 120_000_000_000L;

  /**
   * The fleet's deployments: {@link #DEDICATED} one model per GPU for good (one deployment per
   * model, each engine with the whole GPU's KV), {@link #STATIC} two models per GPU for good (each
   * engine with half the GPU), or the {@link #LIFECYCLE}'s.
   */
  public enum Mode { DEDICATED, STATIC, LIFECYCLE }

  /**
   * A run's fleet.
   *
   * @param mode static deployments or the lifecycle
   * @param elasticKv whether an awake engine's KV grows into memory a sleeping neighbour freed
   * @param gpus GPUs in the fleet
   * @param wakeNanos a level-1 wake
   * @param sleepNanos a level-1 sleep
   * @param idleTimeout every claim's idle timeout
   * @param seed the router's random seed
   */
  public record Config(Mode mode, boolean elasticKv, int gpus, long wakeNanos, long sleepNanos,
      Duration idleTimeout, long seed) {
    /** The defaults of the {@code --lifecycle} mode. */
    public static Config of(Mode mode, boolean elasticKv, long seed) {
      return new Config(mode, elasticKv, 8, (long) (WAKE_L1_SECONDS * 1e9),
          (long) (SLEEP_L1_SECONDS * 1e9), Duration.ofSeconds(60), seed);
    }

    /**
     * A label: {@code dedicated}, {@code static}, {@code lifecycle/stock-kv} or
     * {@code lifecycle/elastic-kv}.
     */
    public String label() {
      return switch (mode) {
        case DEDICATED -> "dedicated";
        case STATIC -> "static";
        case LIFECYCLE -> "lifecycle/" + (elasticKv ? "elastic-kv" : "stock-kv");
      };
    }
  }

  /**
   * What a run came to.
   *
   * @param run the figures the capacity search reads (p90 TTFT of served requests, served ratio)
   * @param wakeWaitTtftMicros TTFT of the requests that waited for a wake (found no awake copy, or
   *     queued behind one that had)
   * @param gibSecondsPerRequest GPU memory held by engines (weights plus KV pool) integrated over
   *     the run, GiB·s, per served request
   * @param modelsPerGpu distinct models that served requests on a GPU, mean over GPUs
   * @param minAwake the fewest awake (active or loading) copies of each model seen at any moment
   * @param wakes wakes started
   * @param sleeps sleeps started
   * @param actions the lifecycle's actions by reason, "KIND REASON" keys
   */
  public record Result(RunResult run, Histogram wakeWaitTtftMicros, double gibSecondsPerRequest,
      double modelsPerGpu, int[] minAwake, long wakes, long sleeps, Map<String, Long> actions) {}

  private record Event(long time, long seq, int kind, Object payload) implements Comparable<Event> {
    @Override
    public int compareTo(Event o) {
      int c = Long.compare(time, o.time);
      return c != 0 ? c : Long.compare(seq, o.seq);
    }
  }

  private static final class Job {
    final Arrival arrival;
    boolean waitedForWake;
    boolean firstToken;
    @Nullable RequestLease lease;

    Job(Arrival arrival) {
      this.arrival = arrival;
    }
  }

  private final class Copy {
    final int gpu;
    final int model;
    final String id;
    final int index;
    ModelState state;
    boolean draining;
    @Nullable ReplicaEngine engine;
    @Nullable CompletableFuture<ModelActuator.Outcome> pending;
    long ballast;
    long pendingShrink;

    Copy(int index, int gpu, int model, ModelState state) {
      this.index = index;
      this.gpu = gpu;
      this.model = model;
      this.id = "gpu-" + gpu + "/" + workload.models().get(model).name();
      this.state = state;
    }

    /** Whether its engine holds GPU memory: awake, waking or draining. */
    boolean holdsMemory() {
      return state != ModelState.SLEEPING || draining;
    }
  }

  private final MultiModelWorkload workload;
  private final Config config;
  private final EngineConfig engineConfig = EngineConfig.defaults();
  private long now;
  private final InstantSource clock = new InstantSource() {
    @Override
    public Instant instant() {
      return START.plusNanos(now);
    }
  };
  private static final Instant START = Instant.parse("2026-01-01T00:00:00Z");
  private final PriorityQueue<Event> events = new PriorityQueue<>();
  private long seq;
  private final List<Copy> copies = new ArrayList<>();
  private final Map<String, Copy> byId = new HashMap<>();
  private final long[] gpuFreeAt;
  private final Router router;
  private final @Nullable ModelLifecycle lifecycle;
  private List<Replica> replicas = List.of();
  private final List<ArrayDeque<Job>> waiting = new ArrayList<>();
  private final boolean[] retryArmed;
  private boolean roundPending;
  private final Map<Long, int[]> systemTokens = new HashMap<>();
  private final Histogram ttft = new Histogram(3);
  private final Histogram ttftFloor = new Histogram(3);
  private final Histogram e2e = new Histogram(3);
  private final Histogram wakeWait = new Histogram(3);
  private final Set<Long> servedOn = new HashSet<>();
  private final int[] minAwake;
  private final Map<String, Long> actions = new TreeMap<>();
  private double gibSeconds;
  private long lastMemoryAt;
  private int completed;
  private int dropped;
  private int remaining;
  private long wakes;
  private long sleeps;
  private long lastCompletion;
  private long decodeNanos;
  private long decodedTokens;
  private final Map<Long, Long> firstTokenAt = new HashMap<>();
  private long lastArrival;

  private final ReplicaEngine.Listener engineListener = new ReplicaEngine.Listener() {
    @Override
    public void onFirstToken(ReplicaEngine engine, Sequence s, long nowNanos) {
      Job job = (Job) s.attachment();
      if (job.firstToken) {
        return;
      }
      job.firstToken = true;
      long micros = Math.max(1, (nowNanos - job.arrival.atNanos()) / 1000);
      ttft.recordValue(micros);
      if (job.waitedForWake) {
        wakeWait.recordValue(micros);
      }
      firstTokenAt.put(job.arrival.request().id(), nowNanos);
      if (job.lease != null) {
        job.lease.markFirstToken();
      }
    }

    @Override
    public void onFinished(ReplicaEngine engine, Sequence s, long nowNanos) {
      Job job = (Job) s.attachment();
      completed++;
      remaining--;
      Copy c = copies.get(engine.index());
      servedOn.add(((long) c.gpu << 32) | c.model);
      e2e.recordValue(Math.max(1, (nowNanos - job.arrival.atNanos()) / 1000));
      lastCompletion = Math.max(lastCompletion, nowNanos);
      Long first = firstTokenAt.remove(job.arrival.request().id());
      if (first != null && s.generated() > 1) {
        decodeNanos += nowNanos - first;
        decodedTokens += s.generated() - 1;
      }
      if (job.lease != null) {
        job.lease.complete(s.generated());
      }
    }

    @Override
    public void onRejected(ReplicaEngine engine, Sequence s, long nowNanos) {
      Job job = (Job) s.attachment();
      dropped++;
      remaining--;
      if (job.lease != null) {
        job.lease.close();
      }
    }
  };

  private MultiModelSimulation(MultiModelWorkload workload, Config config) {
    this.workload = workload;
    this.config = config;
    int models = workload.models().size();
    gpuFreeAt = new long[config.gpus()];
    retryArmed = new boolean[models];
    minAwake = new int[models];
    java.util.Arrays.fill(minAwake, Integer.MAX_VALUE);
    for (int m = 0; m < models; m++) {
      waiting.add(new ArrayDeque<>());
    }
    int slotsPerGpu = config.mode() == Mode.DEDICATED ? 1 : SLOTS_PER_GPU;
    if (config.mode() != Mode.LIFECYCLE && models > config.gpus() * slotsPerGpu) {
      throw new IllegalArgumentException("models: " + models + " (expected: at most "
          + config.gpus() * slotsPerGpu + " for a " + config.label() + " fleet)");
    }
    int[][] assignment = staticAssignment(workload.models(), config.gpus(), slotsPerGpu);
    for (int g = 0; g < config.gpus(); g++) {
      for (int m = 0; m < models; m++) {
        boolean assigned = false;
        for (int a : assignment[g]) {
          assigned |= a == m;
        }
        if (assigned || config.mode() == Mode.LIFECYCLE) {
          Copy c = new Copy(copies.size(), g, m, assigned ? ModelState.ACTIVE : ModelState.SLEEPING);
          copies.add(c);
          byId.put(c.id, c);
        }
      }
    }
    AffinityRouter.Builder rb = AffinityRouter.builder()
        .clock(clock)
        .executor(Runnable::run)
        .random(new SplittableRandom(config.seed()))
        .noLoadExchange();
    if (config.mode() == Mode.LIFECYCLE) {
      List<ModelClaim> claims = new ArrayList<>();
      for (ModelSpec m : workload.models()) {
        claims.add(ModelClaim.builder(m.name()).gpuMemoryBytes(CLAIM_BYTES)
            .minAwake(m.minAwake()).maxAwake(config.gpus()).idleTimeout(config.idleTimeout())
            .sleepLevel(1).build());
      }
      lifecycle = ModelLifecycle.builder()
          .claims(claims)
          .fleet(() -> replicas)
          .actuator(new SimActuator())
          .gpuGroup(r -> String.valueOf(byId.get(r.id()).gpu))
          .gpuMemoryBytes(GROUP_BYTES)
          .ticker(() -> now)
          .build();
      rb.addListener(lifecycle.listener());
      rb.addListener(new RoutingListener() {
        @Override
        public void onWakeRequested(Replica replica, String model) {
          requestRound();
        }
      });
    } else {
      lifecycle = null;
    }
    router = rb.build();
  }

  /** The static fleet's deployments, {@value #SLOTS_PER_GPU} slots per GPU. */
  public static int[][] staticAssignment(List<ModelSpec> models, int gpus) {
    return staticAssignment(models, gpus, SLOTS_PER_GPU);
  }

  /**
   * A fixed fleet's deployments: slots ({@code slotsPerGpu} per GPU) per model in
   * proportion to its mean traffic share, at least one each (largest remainders get the rest);
   * then GPU by GPU, first slots then second slots, in order of the models' slot counts, so that
   * no GPU hosts a model twice and the busiest models are spread widest.
   *
   * @return for each GPU, the models it hosts
   */
  public static int[][] staticAssignment(List<ModelSpec> models, int gpus, int slotsPerGpu) {
    int slots = gpus * slotsPerGpu;
    int n = models.size();
    int[] count = new int[n];
    if (n > slots) { // more models than slots: the busiest get one each (the lifecycle's start)
      List<Integer> byShare = new ArrayList<>();
      for (int m = 0; m < n; m++) {
        byShare.add(m);
      }
      byShare.sort((a, b) -> Double.compare(models.get(b).share(), models.get(a).share()));
      int[][] out = new int[gpus][slotsPerGpu];
      for (int i = 0; i < slots; i++) {
        out[i % gpus][i / gpus] = byShare.get(i);
      }
      return out;
    }
    double[] rest = new double[n];
    int used = 0;
    double total = 0;
    for (ModelSpec m : models) {
      total += m.share();
    }
    for (int m = 0; m < n; m++) {
      double exact = slots * models.get(m).share() / total;
      count[m] = Math.max(1, (int) Math.floor(exact));
      rest[m] = exact - count[m]; // negative where the minimum of 1 lifted it
      used += count[m];
    }
    while (used > slots) { // the minimums took too many: take from the largest
      int big = 0;
      for (int m = 1; m < n; m++) {
        if (count[m] > count[big]) {
          big = m;
        }
      }
      count[big]--;
      used--;
    }
    while (used < slots) {
      int best = -1;
      for (int m = 0; m < n; m++) {
        if (count[m] < gpus && (best < 0 || rest[m] > rest[best])) {
          best = m;
        }
      }
      count[best]++;
      rest[best] = -1;
      used++;
    }
    List<Integer> order = new ArrayList<>();
    for (int m = 0; m < n; m++) {
      order.add(m);
    }
    order.sort((a, b) -> count[b] != count[a] ? Integer.compare(count[b], count[a])
        : Integer.compare(a, b));
    List<Integer> flat = new ArrayList<>();
    for (int m : order) {
      for (int i = 0; i < count[m]; i++) {
        flat.add(m);
      }
    }
    int[][] out = new int[gpus][slotsPerGpu];
    for (int i = 0; i < flat.size(); i++) {
      out[i % gpus][i / gpus] = flat.get(i);
    }
    return out;
  }

  /** Runs one simulation. */
  public static Result run(MultiModelWorkload workload, Config config) {
    return new MultiModelSimulation(workload, config).run();
  }

  private Result run() {
    remaining = workload.arrivals().size();
    for (Copy c : copies) {
      if (c.state == ModelState.ACTIVE) {
        c.engine = newEngine(c);
      }
    }
    rebuild();
    observeAwake();
    push(0, SCRAPE, null);
    push(0, TICK, null);
    for (Arrival a : workload.arrivals()) {
      push(a.atNanos(), ARRIVAL, new Job(a));
      lastArrival = Math.max(lastArrival, a.atNanos());
    }
    long end = Math.max(lastArrival, workload.spanNanos()) + GRACE_NANOS;
    Event e;
    while ((e = events.poll()) != null && e.time() <= end) {
      now = e.time();
      switch (e.kind()) {
        case ARRIVAL -> route((Job) e.payload(), true);
        case STEP -> step((Copy) e.payload());
        case SCRAPE -> {
          rebuild();
          router.refresh(replicas);
          if (remaining > 0) {
            push(now + SCRAPE_NANOS, SCRAPE, null);
          }
        }
        case TICK -> {
          accountMemory();
          observeAwake();
          if (lifecycle != null) {
            round();
          }
          if (remaining > 0) {
            push(now + TICK_NANOS, TICK, null);
          }
        }
        case ROUND -> {
          roundPending = false;
          round();
        }
        case WAKE_DONE -> wakeDone((Copy) e.payload());
        case SLEEP_DONE -> sleepDone((Copy) e.payload());
        case DRAIN -> drained((Copy) e.payload());
        case RETRY -> {
          int m = (Integer) e.payload();
          retryArmed[m] = false;
          release(m);
        }
        default -> throw new IllegalStateException("event " + e.kind());
      }
    }
    accountMemory();
    for (ArrayDeque<Job> q : waiting) {
      dropped += q.size(); // still waiting when the run ended: never served
    }
    long first = workload.arrivals().isEmpty() ? 0 : workload.arrivals().get(0).atNanos();
    long makespan = Math.max(0, lastCompletion - first);
    long[] busy = new long[copies.size()];
    for (int i = 0; i < copies.size(); i++) {
      ReplicaEngine en = copies.get(i).engine;
      busy[i] = en == null ? 0 : en.busyNanos();
    }
    RunResult run = new RunResult(config.label(), "lifecycle", workload.arrivals().size(),
        completed, dropped, 0, 0, 0, 0, 0, 0, 0, ttft, ttftFloor, e2e, makespan, busy, Map.of(), 0,
        List.of(), SCRAPE_NANOS, wakes, 0, idealRequestsPerSecond(), new long[0], 0, 1,
        SimulationConfig.Front.REQUEST, Map.of(), 0, 0, 0);
    Set<Integer> gpusServing = new HashSet<>();
    for (long k : servedOn) {
      gpusServing.add((int) (k >>> 32));
    }
    double modelsPerGpu = (double) servedOn.size() / config.gpus();
    for (int m = 0; m < minAwake.length; m++) {
      if (minAwake[m] == Integer.MAX_VALUE) {
        minAwake[m] = 0;
      }
    }
    return new Result(run, wakeWait, completed == 0 ? 0 : gibSeconds / completed, modelsPerGpu,
        minAwake.clone(), wakes, sleeps, Map.copyOf(actions));
  }

  /**
   * As the main simulator: each request takes its TTFT floor (its prompt past the system prompt,
   * prefilled alone) plus its output at the run's mean time per output token, from its arrival.
   */
  private double idealRequestsPerSecond() {
    double perToken = decodedTokens == 0 ? 0 : (double) decodeNanos / decodedTokens;
    long first = Long.MAX_VALUE;
    long last = Long.MIN_VALUE;
    for (Arrival a : workload.arrivals()) {
      first = Math.min(first, a.atNanos());
      int input = a.request().inputTokens();
      double floorMicros = engineConfig.cost().prefillFloorMicros(
          input - MultiModelWorkload.SYSTEM_TOKENS, MultiModelWorkload.SYSTEM_TOKENS,
          engineConfig.maxBatchedTokens());
      ttftFloor.recordValue(Math.max(1, (long) floorMicros));
      long t = a.atNanos() + (long) (floorMicros * 1000)
          + (long) (perToken * (a.request().outputTokens() - 1));
      last = Math.max(last, t);
    }
    return last <= first ? Double.POSITIVE_INFINITY
        : workload.arrivals().size() / ((last - first) / 1e9);
  }

  private void push(long time, int kind, @Nullable Object payload) {
    events.add(new Event(time, seq++, kind, payload));
  }

  // ---- requests ----

  /** Routes a request; one that finds no awake copy waits for its model. */
  private boolean route(Job job, boolean fresh) {
    int m = job.arrival.model();
    if (fresh && !waiting.get(m).isEmpty()) { // behind the model's waiting requests
      job.waitedForWake = waiting.get(m).peekLast().waitedForWake; // it waits for the same wake
      waiting.get(m).addLast(job);
      return false;
    }
    RoutingRequest request = RoutingRequest.builder().model(workload.models().get(m).name())
        .promptTokens(tokens(job.arrival.request())).build();
    RoutingDecision d = router.select(request, replicas);
    if (d.isRouted()) {
      Copy c = byId.get(d.replica().id());
      if (c == null || c.engine == null || c.state != ModelState.ACTIVE) {
        throw new IllegalStateException("routed to " + d.replica().id() + " which is not active");
      }
      job.lease = d.lease();
      c.engine.submit(new Sequence(job.arrival.request(), engineConfig, job));
      kick(c);
      return true;
    }
    if (d.reason() == RoutingReason.MODEL_WAKING || d.reason() == RoutingReason.MODEL_LOADING) {
      job.waitedForWake = true;
    }
    if (fresh) {
      waiting.get(m).addLast(job);
    }
    if (!retryArmed[m]) {
      retryArmed[m] = true;
      long after = Math.max(1_000_000L, d.retryAfter().toNanos());
      push(now + after, RETRY, m);
    }
    return false;
  }

  /** Offers model {@code m}'s waiting requests again, oldest first, until one is not routed. */
  private void release(int m) {
    ArrayDeque<Job> q = waiting.get(m);
    while (!q.isEmpty()) {
      if (!route(q.peekFirst(), false)) {
        return;
      }
      q.pollFirst();
    }
  }

  private int[] tokens(io.affinityrouter.examples.simulator.workload.SimRequest r) {
    long[] ids = r.segmentIds();
    int[] lengths = r.segmentTokens();
    int[] out = new int[r.inputTokens()];
    int[] sys = systemTokens.computeIfAbsent(ids[0], id -> {
      int[] t = new int[lengths[0]];
      for (int j = 0; j < t.length; j++) {
        t[j] = SegmentKeys.token(id, j);
      }
      return t;
    });
    System.arraycopy(sys, 0, out, 0, lengths[0]);
    for (int j = 0; j < lengths[1]; j++) {
      out[lengths[0] + j] = SegmentKeys.token(ids[1], j);
    }
    return out;
  }

  // ---- engines ----

  private ReplicaEngine newEngine(Copy c) {
    KvCache cache = new KvCache(startKvBlocks(), true);
    c.ballast = 0;
    c.pendingShrink = 0;
    return new ReplicaEngine(c.index, engineConfig, cache);
  }

  /** Elastic engines start with the lone engine's pool (then resize); dedicated ones keep it. */
  private long startKvBlocks() {
    return config.elasticKv() || config.mode() == Mode.DEDICATED
        ? EngineConfig.DEFAULT_KV_BLOCKS : SHARE_BLOCKS;
  }

  private void kick(Copy c) {
    ReplicaEngine e = c.engine;
    if (e == null || e.isStepping() || (c.state != ModelState.ACTIVE && !c.draining)) {
      return;
    }
    long d = e.startStep();
    if (d > 0) {
      long start = Math.max(now, gpuFreeAt[c.gpu]);
      gpuFreeAt[c.gpu] = start + d;
      push(start + d, STEP, c);
    }
  }

  private void step(Copy c) {
    ReplicaEngine e = c.engine;
    if (e == null) {
      return;
    }
    e.finishStep(now, engineListener);
    if (c.pendingShrink > 0) {
      shrink(c, c.pendingShrink);
    }
    kick(c);
    drained(c);
  }

  /** A draining engine with nothing left in it starts its sleep proper. */
  private void drained(Copy c) {
    ReplicaEngine e = c.engine;
    if (c.draining && e != null && !e.isStepping() && e.runningCount() + e.waitingCount() == 0) {
      push(now + config.sleepNanos(), SLEEP_DONE, c);
      c.draining = false; // the sleep itself is under way: memory held until done
      c.engine = null;
      sleepingNow.add(c);
    }
  }

  /** Copies whose sleep is under way past their drain: they still hold memory. */
  private final Set<Copy> sleepingNow = new HashSet<>();

  private boolean holdsMemory(Copy c) {
    return c.holdsMemory() || sleepingNow.contains(c);
  }

  /** The elastic KV pool of each engine holding memory on {@code gpu}: its even split. */
  private long kvBlocksOn(int gpu) {
    int n = 0;
    for (Copy c : copies) {
      if (c.gpu == gpu && holdsMemory(c)) {
        n++;
      }
    }
    return kvBlocks(Math.max(1, n));
  }

  private static long kvBlocks(int awake) {
    return (long) ((USABLE_GIB - awake * ENGINE_FIXED_GIB) / awake * BLOCKS_PER_GIB);
  }

  /** Elastic KV: resizes every awake engine on {@code gpu} to its share. */
  private void resize(int gpu) {
    if (!config.elasticKv()) {
      return;
    }
    long target = kvBlocksOn(gpu);
    for (Copy c : copies) {
      ReplicaEngine e = c.engine;
      if (c.gpu != gpu || e == null) {
        continue;
      }
      long current = e.cache().capacityBlocks() - c.ballast;
      c.pendingShrink = 0;
      if (current > target) {
        shrink(c, current - target);
      } else if (current < target) {
        long give = Math.min(c.ballast, target - current);
        e.cache().release(new long[0], 0, give);
        c.ballast -= give;
        kick(c);
      }
    }
  }

  /** Takes up to {@code blocks} from the engine's free and evictable blocks as ballast. */
  private void shrink(Copy c, long blocks) {
    KvCache cache = c.engine.cache();
    long take = Math.min(blocks, Math.max(0, cache.capacityBlocks() - cache.activeBlocks()));
    if (take > 0 && cache.grow(take)) {
      c.ballast += take;
      c.pendingShrink = blocks - take;
    } else {
      c.pendingShrink = blocks;
    }
  }

  private boolean shrinkPending(int gpu) {
    for (Copy c : copies) {
      if (c.gpu == gpu && c.pendingShrink > 0) {
        return true;
      }
    }
    return false;
  }

  // ---- the actuator ----

  private final class SimActuator implements ModelActuator {
    @Override
    public CompletionStage<Outcome> sleep(String replicaId, String model, int level) {
      Copy c = byId.get(replicaId);
      if (c == null) {
        return CompletableFuture.completedFuture(Outcome.UNSUPPORTED);
      }
      if (c.state == ModelState.SLEEPING && !c.draining && !sleepingNow.contains(c)) {
        return CompletableFuture.completedFuture(Outcome.DONE);
      }
      if (c.pending != null) {
        return CompletableFuture.completedFuture(Outcome.FAILED); // one action at a time
      }
      CompletableFuture<Outcome> f = new CompletableFuture<>();
      c.pending = f;
      sleeps++;
      c.state = ModelState.SLEEPING;
      c.draining = true;
      push(now, DRAIN, c); // sleeps at once if idle (after this round)
      rebuild();
      return f;
    }

    @Override
    public CompletionStage<Outcome> wake(String replicaId, String model) {
      Copy c = byId.get(replicaId);
      if (c == null) {
        return CompletableFuture.completedFuture(Outcome.UNSUPPORTED);
      }
      if (c.state != ModelState.SLEEPING && !c.draining) {
        return CompletableFuture.completedFuture(Outcome.DONE);
      }
      if (c.pending != null || c.draining || sleepingNow.contains(c)) {
        return CompletableFuture.completedFuture(Outcome.FAILED);
      }
      CompletableFuture<Outcome> f = new CompletableFuture<>();
      c.pending = f;
      wakes++;
      c.state = ModelState.LOADING;
      resize(c.gpu);
      push(now + config.wakeNanos(), WAKE_DONE, c);
      rebuild();
      return f;
    }
  }

  private void wakeDone(Copy c) {
    if (config.elasticKv() && shrinkPending(c.gpu)) {
      push(now + 10_000_000L, WAKE_DONE, c); // the neighbour's KV is not yet given back
      return;
    }
    c.state = ModelState.ACTIVE;
    c.engine = newEngine(c);
    resize(c.gpu);
    rebuild();
    observeAwake();
    answer(c);
    release(c.model);
  }

  private void sleepDone(Copy c) {
    sleepingNow.remove(c);
    resize(c.gpu);
    rebuild();
    observeAwake();
    answer(c);
  }

  private void answer(Copy c) {
    CompletableFuture<ModelActuator.Outcome> f = c.pending;
    c.pending = null;
    accountMemory();
    if (f != null) {
      f.complete(ModelActuator.Outcome.DONE);
    }
    requestRound();
  }

  // ---- the lifecycle ----

  /** {@code -Dlifecycle.trace=true}: each action on stderr, with the requests waiting per model. */
  private static final boolean TRACE = Boolean.getBoolean("lifecycle.trace");

  private String waitingSummary() {
    StringBuilder b = new StringBuilder("  | queued per copy:");
    for (Copy c : copies) {
      if (c.engine != null && c.engine.waitingCount() > 0) {
        b.append(' ').append(c.id).append('=').append(c.engine.waitingCount());
      }
    }
    return b.toString();
  }

  private void requestRound() {
    if (lifecycle != null && !roundPending) {
      roundPending = true;
      push(now, ROUND, null);
    }
  }

  private void round() {
    List<LifecycleAction> started = lifecycle.runOnce().toCompletableFuture().join();
    for (LifecycleAction a : started) {
      actions.merge(a.kind() + " " + a.reason(), 1L, Long::sum);
      if (TRACE) {
        System.err.printf("%8.1f s  %s%s%n", now / 1e9, a, waitingSummary());
      }
    }
  }

  // ---- the fleet view and figures ----

  private void rebuild() {
    List<Replica> out = new ArrayList<>(copies.size());
    Instant ready = START;
    for (Copy c : copies) {
      ReplicaEngine e = c.engine;
      ReplicaLoad.Builder load = ReplicaLoad.builder();
      if (e != null) {
        load.runningRequests(e.runningCount()).waitingRequests(e.waitingCount())
            .kvUsage(Math.min(1.0, (double) e.cache().activeBlocks()
                / Math.max(1, e.cache().capacityBlocks() - c.ballast)))
            .kvCapacityTokens((e.cache().capacityBlocks() - c.ballast) * engineConfig.blockSize());
      }
      out.add(Replica.builder(c.id).readySince(ready)
          .model(workload.models().get(c.model).name(), c.state).load(load.build()).build());
    }
    replicas = List.copyOf(out);
  }

  private void accountMemory() {
    double held = 0;
    for (Copy c : copies) {
      if (!holdsMemory(c)) {
        continue;
      }
      ReplicaEngine e = c.engine;
      long kv = e == null ? (config.elasticKv() ? kvBlocksOn(c.gpu) : startKvBlocks())
          : e.cache().capacityBlocks() - c.ballast;
      held += ENGINE_FIXED_GIB + kv / BLOCKS_PER_GIB;
    }
    gibSeconds += held * (now - lastMemoryAt) / 1e9;
    lastMemoryAt = now;
  }

  private void observeAwake() {
    int[] n = new int[minAwake.length];
    for (Copy c : copies) {
      if (c.state != ModelState.SLEEPING) {
        n[c.model]++;
      }
    }
    for (int m = 0; m < n.length; m++) {
      minAwake[m] = Math.min(minAwake[m], n[m]);
    }
  }

  /** How many copies of each state, for tests. */
  Map<ModelState, Integer> states() {
    Map<ModelState, Integer> m = new EnumMap<>(ModelState.class);
    for (Copy c : copies) {
      m.merge(c.state, 1, Integer::sum);
    }
    return m;
  }
}
