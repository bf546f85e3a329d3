package io.affinityrouter.core;

import io.affinityrouter.RequestLease;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * The {@link RequestLease} of a routed request: holds its admission on a {@link ReplicaState} and
 * releases it exactly once, on the first {@link #close()} or {@link #complete(int)}, whatever the
 * threads; its estimated prefill leaves the replica's queue of prefill work when the first token
 * arrives (or when it ends without one). Thread-safe; lock-free but for a short lock on that queue.
 */
final class Lease implements RequestLease {
  private static final int OPEN = 0;
  private static final int FIRST_TOKEN = 1;
  private static final int CLOSED = 2;
  private static final AtomicIntegerFieldUpdater<Lease> PHASE =
      AtomicIntegerFieldUpdater.newUpdater(Lease.class, "phase");

  private final LoadTracker tracker;
  private final ReplicaState state;
  private final long committedTokens;
  private final long prefillTokens;
  private final long decodeTokens;
  private final long startMillis;
  private final double prefillSeconds;
  private final double queuePlace;
  private volatile long firstTokenMillis;
  private volatile int phase;

  Lease(LoadTracker tracker, ReplicaState state, long committedTokens, long prefillTokens,
      long decodeTokens, long startMillis, double prefillSeconds, double queuePlace) {
    this.tracker = tracker;
    this.state = state;
    this.committedTokens = committedTokens;
    this.prefillTokens = prefillTokens;
    this.decodeTokens = decodeTokens;
    this.startMillis = startMillis;
    this.prefillSeconds = prefillSeconds;
    this.queuePlace = queuePlace;
  }

  @Override
  public String replicaId() {
    return state.id();
  }

  @Override
  public void markFirstToken() {
    if (PHASE.compareAndSet(this, OPEN, FIRST_TOKEN)) {
      firstTokenMillis = tracker.nowMillis();
      state.prefillDone(prefillTokens);
      state.workDoneThrough(queuePlace, firstTokenMillis);
      tracker.freed();
    }
  }

  @Override
  public void complete(int outputTokens) {
    if (outputTokens < 0) {
      throw new IllegalArgumentException("outputTokens: " + outputTokens + " (expected: >= 0)");
    }
    int previous = release();
    if (previous == OPEN) { // finished without a first-token mark: its prefill is done
      state.workDoneThrough(queuePlace, tracker.nowMillis());
    }
    if (previous != CLOSED) {
      tracker.completed(state, outputTokens, startMillis, firstTokenMillis);
      tracker.freed();
    }
  }

  @Override
  public void close() {
    int previous = release();
    if (previous == OPEN) {
      state.withdrawWork(prefillSeconds);
    }
    if (previous != CLOSED) {
      tracker.freed();
    }
  }

  /** Releases the admission; returns the phase it was in ({@code CLOSED}: already released). */
  private int release() {
    int previous = PHASE.getAndSet(this, CLOSED);
    if (previous == CLOSED) {
      return CLOSED;
    }
    state.release(committedTokens, previous == OPEN ? prefillTokens : 0, decodeTokens);
    return previous;
  }

  @Override
  public boolean isClosed() {
    return phase == CLOSED;
  }

  @Override
  public String toString() {
    return "Lease{" + state.id() + ", tokens=" + committedTokens + ", phase=" + phase + '}';
  }
}
