package io.affinityrouter.core;

import io.affinityrouter.Replica;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.SessionContext;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;
import java.util.Objects;

/**
 * The working state of one {@code select}: per-replica status and cost terms, the prompt's block
 * hashes, and the candidate this router admitted. Each thread reuses one selection and its arrays
 * ({@link Scratch}); a decision that continues on another thread (a binding store that has not
 * answered yet) continues on a {@link #detached()} copy. Not thread-safe; owned by one decision at a
 * time.
 */
@SuppressWarnings("NullAway.Init") // reset() sets every field before a decision reads one
final class Selection {
  // Replica status codes.
  static final byte OK = 0;
  static final byte DRAINING = 1;
  static final byte AT_LIMIT = 2;
  static final byte UNHEALTHY = 3;
  static final byte NO_MODEL = 4;
  static final byte ASLEEP = 5;
  static final byte LOADING = 6;
  static final byte FILTERED = 7;

  RoutingRequest request;
  List<Replica> replicas;
  int size;
  long startNanos;
  @Nullable String model;
  int promptTokens;
  int expectedOutput;
  long requestTokens;
  int tokensPerBlock;

  long[] hashes;
  int blocks;
  byte[] status;
  ReplicaState[] states;
  int[] matched;
  double[] queue;
  double[] prefill;
  double[] plugin;
  double[] slowdown;
  double[] cost;

  @Nullable BindingKey key;
  int candidate = -1;
  /** The replica credited with a session context beyond what the index knows, or -1. */
  int credited = -1;
  long creditedTokens;
  boolean detached;
  /** The capacity this decision holds on replicas. */
  final Reservations reservations = new Reservations();
  private final Outcome.Decided decided = new Outcome.Decided();

  /** The session's key, for the stages that run only for a request with a session. */
  BindingKey sessionKey() {
    return Objects.requireNonNull(key, "a request without a session");
  }

  /** Starts a new decision on this thread's selection, pointing at its scratch arrays. */
  Selection reset(RoutingRequest request, List<Replica> replicas, long startNanos,
      @Nullable String model,
      int expectedOutput, int tokensPerBlock, Scratch s) {
    this.request = request;
    this.replicas = replicas;
    this.size = replicas.size();
    this.startNanos = startNanos;
    this.model = model;
    this.promptTokens = request.promptTokenCount();
    this.expectedOutput = expectedOutput;
    this.requestTokens = (long) promptTokens + expectedOutput;
    this.tokensPerBlock = tokensPerBlock;
    this.hashes = s.hashes;
    this.blocks = 0;
    this.status = s.status;
    this.states = s.states;
    this.matched = s.matched;
    this.queue = s.queue;
    this.prefill = s.prefill;
    this.plugin = s.plugin;
    this.slowdown = s.slowdown;
    this.cost = s.cost;
    this.key = null;
    this.candidate = -1;
    this.credited = -1;
    this.creditedTokens = 0;
    this.detached = false;
    this.reservations.clear();
    return this;
  }

  /**
   * A copy that owns its arrays, so the decision survives this thread's next one. A detached
   * selection returns itself.
   */
  Selection detached() {
    if (detached) {
      return this;
    }
    Selection c = new Selection();
    c.request = request;
    c.replicas = replicas;
    c.size = size;
    c.startNanos = startNanos;
    c.model = model;
    c.promptTokens = promptTokens;
    c.expectedOutput = expectedOutput;
    c.requestTokens = requestTokens;
    c.tokensPerBlock = tokensPerBlock;
    c.hashes = Arrays.copyOf(hashes, blocks);
    c.blocks = blocks;
    c.status = Arrays.copyOf(status, size);
    c.states = Arrays.copyOf(states, size);
    c.matched = Arrays.copyOf(matched, size);
    c.queue = Arrays.copyOf(queue, size);
    c.prefill = Arrays.copyOf(prefill, size);
    c.plugin = Arrays.copyOf(plugin, size);
    c.slowdown = Arrays.copyOf(slowdown, size);
    c.cost = Arrays.copyOf(cost, size);
    c.key = key;
    c.candidate = candidate;
    c.credited = credited;
    c.creditedTokens = creditedTokens;
    c.detached = true;
    c.reservations.moveFrom(reservations);
    return c;
  }

  /** {@code d} as this selection's outcome (one reused instance: read it before the next). */
  Outcome decided(RoutingDecision d) {
    reservations.releaseLeftovers(this);
    return decided.set(d);
  }

  /** Whether some replica has status {@code code} ({@link #DRAINING}, {@link #ASLEEP}, ...). */
  boolean any(byte code) {
    for (int i = 0; i < size; i++) {
      if (status[i] == code) {
        return true;
      }
    }
    return false;
  }

  /** Whether some replica is usable, or would be but for its limits. */
  boolean anyUsableOrAtLimit() {
    for (int i = 0; i < size; i++) {
      if (usable(i) || status[i] == AT_LIMIT) {
        return true;
      }
    }
    return false;
  }

  boolean usable(int i) {
    return status[i] == OK || status[i] == DRAINING;
  }

  /** Index of the replica with this id, or -1. */
  int indexOf(String replicaId) {
    for (int i = 0; i < size; i++) {
      if (states[i].id().equals(replicaId)) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Tokens of the prompt cached on replica {@code i}: as the index knows it, or as the session's
   * context credits it.
   */
  long cachedTokens(int i) {
    long indexed = Math.min(promptTokens, (long) matched[i] * tokensPerBlock);
    return i == credited ? Math.max(indexed, creditedTokens) : indexed;
  }

  /** The request as a session context for its binding: prompt, expected output, deepest block. */
  SessionContext turn(long writer) {
    return new SessionContext(writer, promptTokens, expectedOutput, blocks,
        blocks == 0 ? 0 : hashes[blocks - 1]);
  }

  /** Per-thread arrays reused across decisions. */
  static final class Scratch {
    long[] hashes;
    byte[] status = new byte[0];
    ReplicaState[] states = new ReplicaState[0];
    int[] matched = new int[0];
    double[] queue = new double[0];
    double[] prefill = new double[0];
    double[] plugin = new double[0];
    double[] slowdown = new double[0];
    double[] cost = new double[0];
    double[] ramp = new double[0];
    double[] lifetime = new double[0];
    double[] charge = new double[0];
    long[] idHash = new long[0];
    boolean[] allowed = new boolean[0];
    final int[] depthByOrdinal;
    final int[] ordinals;
    final long[] seenEpoch;
    long epoch;
    int[] best;
    final Selection selection = new Selection();
    boolean busy;

    Scratch(int maxBlocks, int maxOrdinals, int topK) {
      this.hashes = new long[maxBlocks];
      this.depthByOrdinal = new int[maxOrdinals];
      this.ordinals = new int[maxOrdinals];
      this.seenEpoch = new long[maxOrdinals];
      this.best = new int[topK];
    }

    void ensure(int n) {
      if (status.length >= n) {
        return;
      }
      int c = Math.max(n, status.length * 2);
      status = new byte[c];
      states = new ReplicaState[c];
      matched = new int[c];
      queue = new double[c];
      prefill = new double[c];
      plugin = new double[c];
      slowdown = new double[c];
      cost = new double[c];
      ramp = new double[c];
      lifetime = new double[c];
      charge = new double[c];
      idHash = new long[c];
      allowed = new boolean[c];
    }
  }
}
