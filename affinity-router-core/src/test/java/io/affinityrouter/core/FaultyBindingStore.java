package io.affinityrouter.core;

import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.SessionContext;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A binding store for fault-injection tests: every call reaches the store it wraps (the write
 * happens), and a seeded share of the answers is then <em>late</em> (held until
 * {@link #releaseLate()}, so the router has timed out on it), <em>lost</em> (never delivered) or
 * <em>failed</em> (delivered as an error). No timing is involved: the faults are decided by the
 * seed, and late answers arrive when the test says. Thread-safe.
 */
public final class FaultyBindingStore implements BindingStore {
  private final BindingStore delegate;
  private final SplittableRandom random;
  private final double late;
  private final double lost;
  private final double failed;
  private final List<Runnable> held = new ArrayList<>();
  private volatile boolean faults = true;
  /** Answers drawn for a fault while faults were on (most pass through unharmed). */
  public final AtomicInteger drawn = new AtomicInteger();
  public final AtomicInteger lateAnswers = new AtomicInteger();
  public final AtomicInteger lostAnswers = new AtomicInteger();
  public final AtomicInteger failedAnswers = new AtomicInteger();
  private final AtomicInteger undelivered = new AtomicInteger();

  /** Wraps {@code delegate}; the shares are of all getOrClaim and repin answers. */
  public FaultyBindingStore(BindingStore delegate, long seed, double late, double lost,
      double failed) {
    this.delegate = delegate;
    this.random = new SplittableRandom(seed);
    this.late = late;
    this.lost = lost;
    this.failed = failed;
  }

  /** Turns the faults on or off (on at first); answers held so far stay held. */
  public void faults(boolean on) {
    this.faults = on;
  }

  /**
   * Delivers every late answer, on the calling thread, waiting up to {@code timeout} for those the
   * wrapped store has not answered yet.
   *
   * @throws IllegalStateException if some are still unanswered then
   */
  public void releaseLate(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      List<Runnable> now;
      synchronized (held) {
        now = new ArrayList<>(held);
        held.clear();
      }
      now.forEach(Runnable::run);
      if (undelivered.get() == 0) {
        return;
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(undelivered.get() + " late answers never came");
      }
      Thread.sleep(5);
    }
  }

  @Override
  public CompletionStage<Binding> getOrClaim(BindingKey key, String candidate, Duration ttl) {
    return inject(delegate.getOrClaim(key, candidate, ttl));
  }

  @Override
  public CompletionStage<Binding> repin(BindingKey key, long expectedGeneration,
      String newReplicaId, Duration ttl) {
    return inject(delegate.repin(key, expectedGeneration, newReplicaId, ttl));
  }

  @Override
  public CompletionStage<Binding> getOrClaim(BindingKey key, String candidate, Duration ttl,
      SessionContext turn) {
    return inject(delegate.getOrClaim(key, candidate, ttl, turn));
  }

  @Override
  public CompletionStage<Binding> repin(BindingKey key, long expectedGeneration,
      String newReplicaId, Duration ttl, SessionContext turn) {
    return inject(delegate.repin(key, expectedGeneration, newReplicaId, ttl, turn));
  }

  @Override
  public CompletionStage<Optional<Binding>> get(BindingKey key) {
    return delegate.get(key);
  }

  @Override
  public void close() {
    delegate.close();
  }

  private CompletionStage<Binding> inject(CompletionStage<Binding> answer) {
    double draw;
    synchronized (random) {
      draw = random.nextDouble();
    }
    if (faults) {
      drawn.incrementAndGet();
    }
    if (!faults || draw >= late + lost + failed) {
      return answer;
    }
    CompletableFuture<Binding> out = new CompletableFuture<>();
    if (draw < late) {
      lateAnswers.incrementAndGet();
      undelivered.incrementAndGet();
      // held until released; delivered as the store answered
      answer.whenComplete((b, ex) -> {
        synchronized (held) {
          held.add(() -> {
            undelivered.decrementAndGet();
            if (ex != null) {
              out.completeExceptionally(ex);
            } else {
              out.complete(b);
            }
          });
        }
      });
    } else if (draw < late + lost) {
      lostAnswers.incrementAndGet();
    } else {
      failedAnswers.incrementAndGet();
      answer.whenComplete((b, ex) -> out.completeExceptionally(
          new IOException("injected: the answer failed after the write")));
    }
    return out;
  }
}
