package io.affinityrouter.core;

import java.time.InstantSource;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The registry of {@link ReplicaState}s by replica id, the ordinals they carry (their key in the
 * prefix index), and the fleet-wide averages the load model learns from completed leases: output
 * tokens per request and uncached prompt tokens per request.
 *
 * <p>States are created on first sight of a replica id and kept: their number is bounded by
 * {@code maxReplicas} distinct ids over the router's life; past it, ids beyond the bound share
 * nothing with the index (they get no ordinal and never match a prefix) but are still counted and
 * limited. Thread-safe.
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

  /** Ordinal given to replicas past the bound. */
  static final int NO_ORDINAL = -1;

  private final ConcurrentHashMap<String, ReplicaState> states = new ConcurrentHashMap<>();
  private final AtomicInteger nextOrdinal = new AtomicInteger();
  private final int maxReplicas;
  private final InstantSource clock;
  private final Ewma outputTokensPerRequest = new Ewma(0.05, OUTPUT_TOKENS_PRIOR);
  private final Ewma uncachedPromptTokensPerRequest = new Ewma(0.05, PROMPT_TOKENS_PRIOR);
  private volatile Runnable onFreed; // the admission queue's signal, if the router holds requests

  /**
   * Creates a tracker.
   *
   * @param maxReplicas distinct replica ids that get an ordinal
   * @param clock the router's clock, for lease timing
   */
  LoadTracker(int maxReplicas, InstantSource clock) {
    this.maxReplicas = maxReplicas;
    this.clock = clock;
  }

  /** Runs {@code signal} whenever a lease frees capacity (closes, or its prefill ends). */
  void onFreed(Runnable signal) {
    this.onFreed = signal;
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

  /** Every replica state created so far (a live view; safe to read while others are created). */
  java.util.Collection<ReplicaState> states() {
    return java.util.Collections.unmodifiableCollection(states.values());
  }

  private ReplicaState create(String id) {
    int ordinal = nextOrdinal.get() < maxReplicas ? nextOrdinal.getAndIncrement() : NO_ORDINAL;
    if (ordinal >= maxReplicas) {
      ordinal = NO_ORDINAL;
    }
    return new ReplicaState(id, ordinal, DECODE_RATE_PRIOR);
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

  /** The tracker's clock, in milliseconds. */
  long nowMillis() {
    return clock.millis();
  }
}
