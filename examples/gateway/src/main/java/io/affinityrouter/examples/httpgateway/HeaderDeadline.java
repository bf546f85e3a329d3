package io.affinityrouter.examples.httpgateway;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.eclipse.jetty.io.Connection;

/**
 * Closes connections whose client takes longer than the header timeout to send a request's headers
 * (slowloris): the idle timeout alone never fires for a client that sends one byte a second.
 *
 * <p>A connection is "reading headers" while it has received bytes since its last request ended
 * and no request is being handled on it; a sweep every quarter of the timeout closes those that
 * have been so for longer than the timeout (so a slow sender is closed between 1 and 1.25 timeouts
 * after its first byte). Slow senders hold no thread meanwhile: the server parses headers without
 * blocking. Registered on the connector as a {@link Connection.Listener}; the route handler calls
 * {@link #requestStarted} and {@link #requestEnded}. Thread-safe; {@link #close()} stops the
 * sweeps.
 */
final class HeaderDeadline implements Connection.Listener, AutoCloseable {
  private final long timeoutNanos;
  private final Map<Connection, Watch> watched = new ConcurrentHashMap<>();
  private final ScheduledExecutorService sweeper;
  private final LongAdder closed = new LongAdder();

  HeaderDeadline(Duration timeout) {
    this.timeoutNanos = timeout.toNanos();
    this.sweeper = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "gateway-header-deadline");
      t.setDaemon(true);
      return t;
    });
    long period = Math.max(10_000_000L, timeoutNanos / 4);
    sweeper.scheduleWithFixedDelay(this::sweep, period, period, TimeUnit.NANOSECONDS);
  }

  /** Connections closed for sending their headers too slowly, so far. */
  long closedConnections() {
    return closed.sum();
  }

  @Override
  public void onOpened(Connection connection) {
    watched.put(connection, new Watch());
  }

  @Override
  public void onClosed(Connection connection) {
    watched.remove(connection);
  }

  /** A request's headers arrived on {@code connection}; its body has its own timeout. */
  void requestStarted(Connection connection) {
    Watch w = watched.get(connection);
    if (w != null) {
      w.busy = true;
    }
  }

  /** The request on {@code connection} ended: from now on, bytes start the next request. */
  void requestEnded(Connection connection) {
    Watch w = watched.get(connection);
    if (w != null) {
      w.baseline = connection.getBytesIn();
      w.partialSince = 0;
      w.busy = false;
    }
  }

  private void sweep() {
    long now = System.nanoTime();
    watched.forEach((c, w) -> {
      if (w.busy || c.getBytesIn() <= w.baseline) {
        w.partialSince = 0;
      } else if (w.partialSince == 0) {
        w.partialSince = now;
      } else if (now - w.partialSince >= timeoutNanos) {
        closed.increment();
        watched.remove(c);
        c.getEndPoint().close();
      }
    });
  }

  @Override
  public void close() {
    sweeper.shutdownNow();
  }

  /** What a sweep knows of one connection. */
  private static final class Watch {
    volatile boolean busy;
    volatile long baseline; // bytes in when the last request ended
    volatile long partialSince; // when bytes past the baseline were first seen; 0 = none
  }
}
