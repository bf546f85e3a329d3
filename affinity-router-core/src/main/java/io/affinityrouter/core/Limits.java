package io.affinityrouter.core;

import io.affinityrouter.Replica;

/** Per-replica in-flight limits: the replica's own, else the router's defaults. Immutable. */
final class Limits {
  private final int defaultMaxRequests;
  private final long defaultMaxTokens;

  Limits(int defaultMaxRequests, long defaultMaxTokens) {
    this.defaultMaxRequests = defaultMaxRequests;
    this.defaultMaxTokens = defaultMaxTokens;
  }

  int maxRequests(Replica r) {
    return r.maxInFlightRequests().isPresent()
        ? r.maxInFlightRequests().getAsInt() : defaultMaxRequests;
  }

  long maxTokens(Replica r) {
    return r.maxInFlightTokens().isPresent() ? r.maxInFlightTokens().getAsLong() : defaultMaxTokens;
  }

  /** Whether replica {@code i} has room for the request now (nothing is reserved). */
  boolean fits(Selection sel, int i) {
    Replica r = sel.replicas.get(i);
    return sel.states[i].fits(maxRequests(r), maxTokens(r), sel.requestTokens);
  }

  /** Reserves the request's place on replica {@code i} against its limits ({@link Reservations}). */
  boolean admit(Selection sel, int i) {
    Replica r = sel.replicas.get(i);
    return sel.reservations.reserve(sel, i, maxRequests(r), maxTokens(r));
  }
}
