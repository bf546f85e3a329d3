package io.affinityrouter.core;

import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.IntConsumer;
import org.jspecify.annotations.Nullable;

/**
 * The registry of {@link ReplicaState}s by replica id, the ordinals they carry (their key in the
 * prefix index), and the fleet-wide averages the load model learns from completed leases: output
 * tokens per request and uncached prompt tokens per request.
 *
 * <p>States are created on first sight of a replica id and retired when the replica is gone: told
 * so ({@link #retire}), or not used (offered, refreshed, sent an event) for the idle time with
 * nothing in flight. A retired ordinal is reused only after {@link #QUARANTINE_MILLIS}, once the
 * index holds nothing of it (decisions still running with the old state record under the old
 * ordinal until then): memory follows the live fleet, and a fresh replica never inherits another's
 * blocks. Past {@code maxReplicas} live ids, the ids beyond share nothing with the index (no
 * ordinal, no prefix match) but are still counted and limited. Thread-safe.
 */
final class LoadTracker {
  /** The prior for output tokens per request before any lease completed: {@value}. */
  static final double OUTPUT_TOKENS_PRIOR = 256;
  /** The prior for uncached prompt tokens per request: {@value}. */
  static final double PROMPT_TOKENS_PRIOR = 1024;
  /**
   * The prior for one sequence's decode rate, output tokens per second: {@value} (about 14 ms per
   * token, a busy vLLM batch for a 7B model on one H100).
   */
  static final double DECODE_RATE_PRIOR = 70;
  /** Milliseconds between two looks for idle replicas and reusable ordinals: {@value}. */
  static final long SWEEP_MILLIS = 10_000;
  /**
   * Milliseconds a retired ordinal waits before it is cleared from the index and reused: {@value},
   * far longer than a decision takes (a store answer is bounded by the store timeout).
   */
  static final long QUARANTINE_MILLIS = 60_000;

  /** Ordinal given to replicas past the bound. */
  static final int NO_ORDINAL = -1;

  private static final RateLimitedLog LOG = new RateLimitedLog(LoadTracker.class, 60);

  private final ConcurrentHashMap<String, ReplicaState> states = new ConcurrentHashMap<>();
  private final int maxReplicas;
  private final long idleMillis;
  private final InstantSource clock;
  private final Executor maintenance;
  private final Ewma outputTokensPerRequest = new Ewma(0.05, OUTPUT_TOKENS_PRIOR);
  private final DecayingQuantile returns = Pinning.returnIntervals();
  private final Ewma uncachedPromptTokensPerRequest = new Ewma(0.05, PROMPT_TOKENS_PRIOR);
  private volatile @Nullable Runnable onFreed; // the admission queue's signal, if the router holds requests
  private volatile IntConsumer clearOrdinal = o -> { }; // drops an ordinal from the index
  private final AtomicBoolean sweeping = new AtomicBoolean();
  private volatile long nextSweepMillis;

  // ordinal bookkeeping, under ordinalLock
  private final Object ordinalLock = new Object();
  private int nextOrdinal;
  private final ArrayDeque<Integer> freeOrdinals = new ArrayDeque<>();
  private final ArrayDeque<long[]> quarantined = new ArrayDeque<>(); // {ordinal, sinceMillis}
  private final int[] incarnations;

  /** A tracker whose replicas are retired only when told ({@link #retire}). */
  LoadTracker(int maxReplicas, InstantSource clock) {
    this(maxReplicas, 0, clock, Runnable::run);
  }

  /**
   * Creates a tracker.
   *
   * @param maxReplicas live replica ids that get an ordinal
   * @param idleMillis unused time after which a replica with nothing in flight is retired; 0: never
   * @param clock the router's clock, for lease timing and idleness
   * @param maintenance runs the sweeps (clearing an ordinal from the index is a full scan)
   */
  LoadTracker(int maxReplicas, long idleMillis, InstantSource clock, Executor maintenance) {
    this.maxReplicas = maxReplicas;
    this.idleMillis = idleMillis;
    this.clock = clock;
    this.maintenance = maintenance;
    this.incarnations = new int[maxReplicas];
    this.nextSweepMillis = clock.millis() + SWEEP_MILLIS;
  }

  /** Runs {@code signal} whenever a lease frees capacity (closes, or its prefill ends). */
  void onFreed(Runnable signal) {
    this.onFreed = signal;
  }

  /** Sets what clears a retired ordinal's entries (the prefix index's full scan). */
  void onClearOrdinal(IntConsumer clear) {
    this.clearOrdinal = clear;
  }

  /** A lease freed capacity: tells the admission queue, if any. */
  void freed() {
    Runnable signal = onFreed;
    if (signal != null) {
      signal.run();
    }
  }

  /** The state of a replica, created on first sight. */
  ReplicaState state(String replicaId) {
    ReplicaState s = states.get(replicaId);
    return s != null ? s : states.computeIfAbsent(replicaId, this::create);
  }

  /** As {@link #state(String)}, recording a use at {@code nowMillis}. */
  ReplicaState used(String replicaId, long nowMillis) {
    ReplicaState s = state(replicaId);
    s.touch(nowMillis);
    return s;
  }

  /** Every live replica state (a live view; safe to read while others are created). */
  java.util.Collection<ReplicaState> states() {
    return java.util.Collections.unmodifiableCollection(states.values());
  }

  private ReplicaState create(String id) {
    int ordinal;
    int incarnation = 0;
    synchronized (ordinalLock) {
      Integer free = freeOrdinals.poll();
      ordinal = free != null ? free : nextOrdinal < maxReplicas ? nextOrdinal++ : NO_ORDINAL;
      if (ordinal != NO_ORDINAL) {
        incarnation = incarnations[ordinal]++;
      }
    }
    return new ReplicaState(id, ordinal, incarnation, DECODE_RATE_PRIOR, clock.millis());
  }

  /**
   * Forgets a replica: its state, and (after the quarantine) its ordinal and index entries. Leases
   * still open on it close against the retired state.
   *
   * @return whether the replica was known
   */
  boolean retire(String replicaId) {
    ReplicaState s = states.remove(replicaId);
    if (s == null) {
      return false;
    }
    quarantine(s);
    return true;
  }

  private void quarantine(ReplicaState s) {
    if (s.ordinal() != NO_ORDINAL) {
      synchronized (ordinalLock) {
        quarantined.add(new long[] {s.ordinal(), clock.millis()});
      }
    }
  }

  /** Starts a sweep on the maintenance executor if one is due at {@code nowMillis}. */
  void maybeSweep(long nowMillis) {
    if (nowMillis < nextSweepMillis || !sweeping.compareAndSet(false, true)) {
      return;
    }
    nextSweepMillis = nowMillis + SWEEP_MILLIS;
    try {
      maintenance.execute(this::sweepGuarded);
    } catch (RuntimeException e) { // a rejecting executor: try again at the next sweep
      sweeping.set(false);
      LOG.warn("the maintenance executor refused the replica sweep (logged at most every 60 s)",
          e);
    }
  }

  private void sweepGuarded() {
    try {
      sweep();
    } catch (RuntimeException | Error e) {
      LOG.warn("the replica sweep failed; the next one tries again (logged at most every 60 s)",
          e);
    } finally {
      sweeping.set(false);
    }
  }

  /** Retires idle replicas and clears and frees the ordinals whose quarantine is over. */
  void sweep() {
    long now = clock.millis();
    if (idleMillis > 0) {
      for (ReplicaState s : states.values()) {
        if (now - s.usedMillis() >= idleMillis && s.inFlightRequests() == 0
            && states.remove(s.id(), s)) {
          quarantine(s);
        }
      }
    }
    while (true) {
      int ordinal;
      synchronized (ordinalLock) {
        long[] q = quarantined.peek();
        if (q == null || now - q[1] < QUARANTINE_MILLIS) {
          return;
        }
        quarantined.poll();
        ordinal = (int) q[0];
      }
      clearOrdinal.accept(ordinal);
      synchronized (ordinalLock) {
        freeOrdinals.add(ordinal);
      }
    }
  }

  /** Average output tokens per completed request. */
  double outputTokensPerRequest() {
    return outputTokensPerRequest.get();
  }

  /** Average uncached prompt tokens per routed request. */
  double uncachedPromptTokensPerRequest() {
    return uncachedPromptTokensPerRequest.get();
  }

  /**
   * Opens a lease on a replica whose admission ({@link ReplicaState#tryAcquire}) already succeeded.
   *
   * @param state the replica
   * @param committedTokens the tokens acquired (prompt + expected output)
   * @param prefillTokens the uncached prompt tokens the replica must prefill
   * @param decodeTokens the expected output tokens
   */
  Lease open(ReplicaState state, long committedTokens, long prefillTokens,
      long decodeTokens) {
    return open(state, committedTokens, prefillTokens, decodeTokens, 0);
  }

  /**
   * As {@link #open(ReplicaState, long, long, long)}, also queueing the request's estimated prefill
   * time ({@code prefillSeconds}, without batch slowdown) in the replica's pending work.
   */
  Lease open(ReplicaState state, long committedTokens, long prefillTokens,
      long decodeTokens, double prefillSeconds) {
    uncachedPromptTokensPerRequest.add(prefillTokens);
    state.addPending(prefillTokens, decodeTokens);
    long now = clock.millis();
    double place = state.enqueueWork(prefillSeconds, prefillTokens + decodeTokens, now);
    return new Lease(this, state, committedTokens, prefillTokens, decodeTokens, now,
        prefillSeconds, place);
  }

  void completed(ReplicaState state, int outputTokens, long startMillis, long firstTokenMillis) {
    outputTokensPerRequest.add(outputTokens);
    long from = firstTokenMillis > 0 ? firstTokenMillis : startMillis;
    long elapsed = clock.millis() - from;
    if (outputTokens > 1 && elapsed > 0) {
      state.learnDecodeRate(outputTokens * 1000.0 / elapsed);
    }
  }

  /** The sessions' return intervals, recorded by the pinning stage. */
  DecayingQuantile returnIntervals() {
    return returns;
  }

  /** The median time sessions take to come back, seconds; 0 until enough have. */
  double turnWindowSeconds() {
    return returns.get();
  }

  /**
   * Counts a session turn routed to {@code state}, over the sessions' return interval (a minute
   * until it is known).
   */
  void countTurn(ReplicaState state, long nowMillis) {
    double window = returns.get();
    state.countTurn(nowMillis, window > 0 ? window : ReplicaState.WRITE_WINDOW_SECONDS);
  }

  /** The tracker's clock, in milliseconds. */
  long nowMillis() {
    return clock.millis();
  }
}
