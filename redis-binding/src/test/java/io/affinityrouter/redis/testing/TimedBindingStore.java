package io.affinityrouter.redis.testing;

import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.SessionContext;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * Wraps a store and records how long its methods held the calling thread (they must not block):
 * evidence that a slow select came from elsewhere (scheduling, GC) and not from the store. A store
 * that blocked would hold every call; a busy machine holds one now and then.
 */
public final class TimedBindingStore implements BindingStore {
  private final BindingStore delegate;
  private final AtomicLong maxSyncNanos = new AtomicLong();
  private final LongAdder calls = new LongAdder();
  private final LongAdder slowCalls = new LongAdder();
  private final long slowNanos;

  /** Counts the calls that held the thread longer than {@code slow}. */
  public TimedBindingStore(BindingStore delegate, Duration slow) {
    this.delegate = delegate;
    this.slowNanos = slow.toNanos();
  }

  /** Calls, and calls longer than the slow threshold, since the last reset; resets both. */
  public long[] takeCalls() {
    return new long[] {calls.sumThenReset(), slowCalls.sumThenReset()};
  }

  /** The longest synchronous call since the last reset, in nanoseconds; resets it. */
  public long takeMaxSyncNanos() {
    return maxSyncNanos.getAndSet(0);
  }

  private <T> T timed(Supplier<T> call) {
    long start = System.nanoTime();
    try {
      return call.get();
    } finally {
      long held = System.nanoTime() - start;
      maxSyncNanos.accumulateAndGet(held, Math::max);
      calls.increment();
      if (held > slowNanos) {
        slowCalls.increment();
      }
    }
  }

  @Override
  public CompletionStage<Binding> getOrClaim(BindingKey key, String candidateReplicaId, Duration ttl) {
    return timed(() -> delegate.getOrClaim(key, candidateReplicaId, ttl));
  }

  @Override
  public CompletionStage<Binding> repin(BindingKey key, long expectedGeneration, String newReplicaId,
      Duration ttl) {
    return timed(() -> delegate.repin(key, expectedGeneration, newReplicaId, ttl));
  }

  @Override
  public CompletionStage<Binding> getOrClaim(BindingKey key, String candidateReplicaId,
      Duration ttl, SessionContext turn) {
    return timed(() -> delegate.getOrClaim(key, candidateReplicaId, ttl, turn));
  }

  @Override
  public CompletionStage<Binding> repin(BindingKey key, long expectedGeneration,
      String newReplicaId, Duration ttl, SessionContext turn) {
    return timed(() -> delegate.repin(key, expectedGeneration, newReplicaId, ttl, turn));
  }

  @Override
  public CompletionStage<Optional<Binding>> get(BindingKey key) {
    return timed(() -> delegate.get(key));
  }

  @Override
  public void close() {
    delegate.close();
  }
}
