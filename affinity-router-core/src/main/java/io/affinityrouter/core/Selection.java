package io.affinityrouter.core;

import io.affinityrouter.Replica;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.load.ReplicaState;
import io.affinityrouter.spi.BindingKey;
import java.util.Arrays;
import java.util.List;

/**
 * The working state of one {@code select}: per-replica status and cost terms, the prompt's block
 * hashes, and the candidate this router admitted. Arrays come from a per-thread {@link Scratch} and
 * are copied ({@link #detach()}) only when the decision continues on another thread (a binding store
 * that has not answered yet). Not thread-safe; owned by one decision at a time.
 */
final class Selection {
  // Replica status codes.
  static final byte OK = 0;
  static final byte DRAINING = 1;
  static final byte AT_LIMIT = 2;
  static final byte UNHEALTHY = 3;
  static final byte NO_MODEL = 4;
  static final byte ASLEEP = 5;
  static final byte LOADING = 6;

  final RoutingRequest request;
  final List<Replica> replicas;
  final int size;
  final long startNanos;
  final String model;
  final int promptTokens;
  final int expectedOutput;
  final long requestTokens;
  final int tokensPerBlock;

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

  BindingKey key;
  int candidate = -1;
  boolean detached;

  Selection(RoutingRequest request, List<Replica> replicas, long startNanos, String model,
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
    this.status = s.status;
    this.states = s.states;
    this.matched = s.matched;
    this.queue = s.queue;
    this.prefill = s.prefill;
    this.plugin = s.plugin;
    this.slowdown = s.slowdown;
    this.cost = s.cost;
  }

  /** Copies the scratch arrays so that the selection survives its thread's next decision. */
  void detach() {
    if (detached) {
      return;
    }
    detached = true;
    hashes = Arrays.copyOf(hashes, blocks);
    status = Arrays.copyOf(status, size);
    states = Arrays.copyOf(states, size);
    matched = Arrays.copyOf(matched, size);
    queue = Arrays.copyOf(queue, size);
    prefill = Arrays.copyOf(prefill, size);
    plugin = Arrays.copyOf(plugin, size);
    slowdown = Arrays.copyOf(slowdown, size);
    cost = Arrays.copyOf(cost, size);
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

  /** Tokens of the prompt cached on replica {@code i} as the index knows it. */
  long cachedTokens(int i) {
    return Math.min(promptTokens, (long) matched[i] * tokensPerBlock);
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
    long[] idHash = new long[0];
    boolean[] allowed = new boolean[0];
    final int[] depthByOrdinal;
    final int[] ordinals;
    final long[] seenEpoch;
    long epoch;
    int[] best;

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
      idHash = new long[c];
      allowed = new boolean[c];
    }
  }
}
