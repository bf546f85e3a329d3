package io.affinityrouter.core;

import java.lang.System.Logger.Level;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * A warning logged at most once per interval, with the number of occurrences not logged since the
 * last one: for failures the library swallows, which must be visible but may repeat on every
 * request. Thread-safe.
 */
final class RateLimitedLog {
  private final System.Logger logger;
  private final long intervalNanos;
  private final AtomicLong lastNanos = new AtomicLong(Long.MIN_VALUE);
  private final LongAdder suppressed = new LongAdder();

  RateLimitedLog(Class<?> owner, long intervalSeconds) {
    this.logger = System.getLogger(owner.getName());
    this.intervalNanos = TimeUnit.SECONDS.toNanos(intervalSeconds);
  }

  /** Logs {@code message} with {@code error} at WARNING, unless one was logged too recently. */
  void warn(String message, Throwable error) {
    long now = System.nanoTime();
    long last = lastNanos.get();
    if ((last == Long.MIN_VALUE || now - last >= intervalNanos)
        && lastNanos.compareAndSet(last, now)) {
      long more = suppressed.sumThenReset();
      logger.log(Level.WARNING, more == 0 ? message
          : message + " (and " + more + " more since the last report)", error);
    } else {
      suppressed.increment();
    }
  }
}
