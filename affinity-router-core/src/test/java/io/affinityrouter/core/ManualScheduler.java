package io.affinityrouter.core;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/** A scheduler on a {@link TestClock}: tasks run only in {@link #runDue()}, when their time came. */
final class ManualScheduler extends AbstractExecutorService implements ScheduledExecutorService {
  private final TestClock clock;
  private final List<Task<?>> tasks = new ArrayList<>();

  ManualScheduler(TestClock clock) {
    this.clock = clock;
  }

  private final class Task<V> extends CompletableFuture<V> implements ScheduledFuture<V> {
    final long atMillis;
    final Callable<V> body;

    Task(long atMillis, Callable<V> body) {
      this.atMillis = atMillis;
      this.body = body;
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(atMillis - clock.millis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public int compareTo(Delayed o) {
      return Long.compare(getDelay(TimeUnit.MILLISECONDS), o.getDelay(TimeUnit.MILLISECONDS));
    }
  }

  /** Runs every task due by the clock, earliest first; returns how many ran. */
  int runDue() {
    int ran = 0;
    while (true) {
      Task<?> next;
      synchronized (tasks) {
        tasks.removeIf(CompletableFuture::isDone);
        next = tasks.stream().filter(t -> t.atMillis <= clock.millis())
            .min(Comparator.comparingLong(t -> t.atMillis)).orElse(null);
        if (next == null) {
          return ran;
        }
        tasks.remove(next);
      }
      run(next);
      ran++;
    }
  }

  /** Tasks scheduled and not cancelled or run. */
  int pending() {
    synchronized (tasks) {
      tasks.removeIf(CompletableFuture::isDone);
      return tasks.size();
    }
  }

  private static <V> void run(Task<V> t) {
    try {
      t.complete(t.body.call());
    } catch (Exception e) {
      t.completeExceptionally(e);
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
    Task<V> t = new Task<>(clock.millis() + unit.toMillis(delay), callable);
    synchronized (tasks) {
      tasks.add(t);
    }
    return t;
  }

  @Override
  public ScheduledFuture<?> scheduleAtFixedRate(Runnable r, long d, long p, TimeUnit u) {
    throw new UnsupportedOperationException();
  }

  @Override
  public ScheduledFuture<?> scheduleWithFixedDelay(Runnable r, long d, long p, TimeUnit u) {
    throw new UnsupportedOperationException();
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
    return true;
  }
}
