package io.affinityrouter.core.load;

import io.affinityrouter.RequestLease;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

/**
 * The {@link RequestLease} of a routed request: holds its admission on a {@link ReplicaState} and
 * releases it exactly once, on the first {@link #close()} or {@link #complete(int)}, whatever the
 * threads. Thread-safe and lock-free.
 */
public final class Lease implements RequestLease {
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
  private volatile long firstTokenMillis;
  private volatile int phase;

  Lease(LoadTracker tracker, ReplicaState state, long committedTokens, long prefillTokens,
      long decodeTokens, long startMillis) {
    this.tracker = tracker;
    this.state = state;
    this.committedTokens = committedTokens;
    this.prefillTokens = prefillTokens;
    this.decodeTokens = decodeTokens;
    this.startMillis = startMillis;
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
    }
  }

  @Override
  public void complete(int outputTokens) {
    if (outputTokens < 0) {
      throw new IllegalArgumentException("outputTokens: " + outputTokens + " (expected: >= 0)");
    }
    if (release()) {
      tracker.completed(state, outputTokens, startMillis, firstTokenMillis);
    }
  }

  @Override
  public void close() {
    release();
  }

  private boolean release() {
    int previous = PHASE.getAndSet(this, CLOSED);
    if (previous == CLOSED) {
      return false;
    }
    state.release(committedTokens, previous == OPEN ? prefillTokens : 0, decodeTokens);
    return true;
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
