package io.affinityrouter.examples.simulator.strategy;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * A {@link ScheduledExecutorService} on simulated time, for the real router's hold deadlines: a
 * task scheduled {@code d} from now runs when the simulation's clock reaches it, as one of its
 * events. Only one-shot {@code schedule} and {@code execute} (run at once) are supported. Not
 * thread-safe, as the simulation.
 */
public final class VirtualScheduler extends AbstractExecutorService
    implements ScheduledExecutorService {
  private final java.time.InstantSource clock;
  private @Nullable BiConsumer<Long, Runnable> sink;

  /** A scheduler on {@code clock}; tasks go to the sink set by {@link #runWith}. */
  public VirtualScheduler(java.time.InstantSource clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /** Sets what runs a task at a simulated time, nanoseconds (the simulation's event queue). */
  public void runWith(BiConsumer<Long, Runnable> sink) {
    this.sink = Objects.requireNonNull(sink, "sink");
  }

  private long nowNanos() {
    java.time.Instant now = clock.instant();
    return now.getEpochSecond() * 1_000_000_000L + now.getNano();
  }

  /** A task due at a simulated time; cancelling it makes its event do nothing. */
  private final class Task<V> extends CompletableFuture<V> implements ScheduledFuture<V> {
    private final long atNanos;

    Task(long atNanos) {
      this.atNanos = atNanos;
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(atNanos - nowNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public int compareTo(Delayed o) {
      return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
    }
  }

  @Override
  public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
    return schedule(() -> {
      command.run();
      return null;
    }, delay, unit);
  }

  @Override
  public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
    if (sink == null) {
      throw new IllegalStateException("not attached to a simulation");
    }
    long at = nowNanos() + Math.max(0, unit.toNanos(delay));
    Task<V> task = new Task<>(at);
    sink.accept(at, () -> {
      if (!task.isDone()) {
        try {
          task.complete(callable.call());
        } catch (Exception e) {
          task.completeExceptionally(e);
        }
      }
    });
    return task;
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period,
      TimeUnit unit) {
    throw new UnsupportedOperationException("periodic tasks");
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay,
      long delay, TimeUnit unit) {
    throw new UnsupportedOperationException("periodic tasks");
  }

  @Override
  public void execute(Runnable command) {
    command.run();
  }

  @Override
  public void shutdown() {}

  @Override
  public List<Runnable> shutdownNow() {
    return List.of();
  }

  @Override
  public boolean isShutdown() {
    return false;
  }

  @Override
  public boolean isTerminated() {
    return false;
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) {
    return false;
  }
}
