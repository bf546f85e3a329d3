package io.affinityrouter.examples.gateway.replica;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.core.metrics.EngineMetrics;
import io.affinityrouter.core.metrics.ThroughputTracker;
import java.net.URI;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One replica as its scrapes describe it: the last {@link Replica} built from a scrape, the
 * throughput tracker fed by its counters, and the count of consecutive failures.
 *
 * <p>Thread-safe: {@link #current()} is a volatile read of an immutable value; updates come from the
 * scrape loop and from failed forwards, and each publishes a whole new {@link Replica}.
 */
final class TrackedReplica {
  private final String id;
  private final URI uri;
  private final int unhealthyAfterFailures;
  private final ThroughputTracker throughput = new ThroughputTracker();
  private final AtomicInteger failures = new AtomicInteger();
  private final AtomicBoolean scraping = new AtomicBoolean();
  private volatile Replica current;
  private volatile long lastListedNanos;

  TrackedReplica(String id, URI uri, Instant now, int unhealthyAfterFailures, long nowNanos) {
    this.id = id;
    this.uri = uri;
    this.unhealthyAfterFailures = unhealthyAfterFailures;
    this.current = Replica.builder(id).address(uri.toString()).readySince(now).build();
    this.lastListedNanos = nowNanos;
  }

  String id() {
    return id;
  }

  URI uri() {
    return uri;
  }

  Replica current() {
    return current;
  }

  /** Marks that a service's instance list still names this replica. */
  void listed(long nowNanos) {
    lastListedNanos = nowNanos;
  }

  long lastListedNanos() {
    return lastListedNanos;
  }

  /** Claims the right to scrape now; false while the previous scrape is still running. */
  boolean tryStartScrape() {
    return scraping.compareAndSet(false, true);
  }

  /** Records a successful scrape's body, taken at {@code nowNanos}. */
  synchronized void scraped(String body, Instant now, long nowNanos) {
    scraping.set(false);
    EngineMetrics metrics = throughput.update(EngineMetrics.parse(body), nowNanos);
    Replica previous = current;
    boolean recovered = previous.health() == ReplicaHealth.UNHEALTHY;
    failures.set(0);
    current = previous.toBuilder()
        .models(metrics.modelStates())
        .load(metrics.replicaLoad())
        .health(ReplicaHealth.HEALTHY)
        .readySince(recovered ? now : previous.readySince())
        .build();
  }

  /**
   * Records a failed scrape or a refused connection; returns true when this failure made the replica
   * unhealthy (the transition, once per failure streak).
   */
  synchronized boolean failed() {
    scraping.set(false);
    if (failures.incrementAndGet() >= unhealthyAfterFailures
        && current.health() != ReplicaHealth.UNHEALTHY) {
      current = current.withHealth(ReplicaHealth.UNHEALTHY);
      return true;
    }
    return false;
  }

  /** Releases the scrape claim without recording anything (the scrape was abandoned). */
  void scrapeAbandoned() {
    scraping.set(false);
  }
}
