package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.core.metrics.EngineMetrics;
import io.affinityrouter.core.metrics.ThroughputTracker;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The gateway's view of its backends, as the {@code List<Replica>} it passes to every
 * {@code select}: each backend's load and model states from its last {@code /metrics} scrape, and
 * its health.
 *
 * <p>Health: a backend is {@link ReplicaHealth#UNHEALTHY} when it refused a scrape's connection, or
 * failed {@value #SCRAPE_FAILURES_TO_UNHEALTHY} scrapes in a row (a timeout on a busy machine is not
 * a dead backend), or for {@code failureCooldown} after a request to it failed
 * ({@link #markFailed}); the router then moves its sessions (repin) and sends it nothing. It turns
 * healthy again with the first successful scrape after the cooldown. A backend never scraped yet is
 * unhealthy.
 *
 * <p>Thread-safe: scrapes and failures update one backend's state under the pool's lock and publish
 * a new immutable list; {@link #replicas()} is a volatile read.
 */
final class BackendPool {
  /** Consecutive failed scrapes (other than a refused connection) that make a backend unhealthy. */
  static final int SCRAPE_FAILURES_TO_UNHEALTHY = 3;

  private final Map<String, Backend> backends = new LinkedHashMap<>();
  private final long cooldownNanos;
  private final LongSupplier nanoTime;
  private volatile List<Replica> replicas;
  private volatile boolean scraped;

  BackendPool(Map<String, URI> baseUrls, Duration failureCooldown, LongSupplier nanoTime) {
    this.cooldownNanos = failureCooldown.toNanos();
    this.nanoTime = nanoTime;
    baseUrls.forEach((id, url) -> backends.put(id, new Backend(id, url)));
    publish();
  }

  /** The replicas as last seen; an immutable list, the same object until something changes. */
  List<Replica> replicas() {
    return replicas;
  }

  /** Whether a scrape of some backend has succeeded (the list carries real load and models). */
  boolean hasScraped() {
    return scraped;
  }

  /** The backends' ids and base URLs. */
  Collection<Backend> backends() {
    return backends.values();
  }

  /** Applies a successful scrape of {@code id}'s {@code /metrics}. */
  synchronized void scraped(String id, EngineMetrics metrics, long atNanos) {
    Backend b = backends.get(id);
    EngineMetrics m = b.tracker.update(metrics, atNanos);
    b.scrapeFailures = 0;
    boolean cooling = b.failedAtNanos != 0 && atNanos - b.failedAtNanos < cooldownNanos;
    Replica next = b.replica.toBuilder()
        .models(m.modelStates())
        .load(m.replicaLoad())
        .health(cooling ? ReplicaHealth.UNHEALTHY : ReplicaHealth.HEALTHY)
        .build();
    if (!cooling) {
      b.failedAtNanos = 0;
    }
    if (!next.equals(b.replica)) {
      b.replica = next;
      publish();
    }
    scraped = true;
  }

  /**
   * Records a failed scrape of {@code id}: unhealthy at once if the connection was refused, else
   * after {@value #SCRAPE_FAILURES_TO_UNHEALTHY} in a row; until a scrape succeeds.
   */
  synchronized void scrapeFailed(String id, boolean refused) {
    Backend b = backends.get(id);
    b.scrapeFailures++;
    if (refused || b.scrapeFailures >= SCRAPE_FAILURES_TO_UNHEALTHY) {
      setHealth(b, ReplicaHealth.UNHEALTHY);
    }
  }

  /** Records a failed request to {@code id}: unhealthy for at least the cooldown. */
  synchronized void markFailed(String id) {
    Backend b = backends.get(id);
    if (b == null) {
      return;
    }
    long now = nanoTime.getAsLong();
    b.failedAtNanos = now == 0 ? 1 : now;
    setHealth(b, ReplicaHealth.UNHEALTHY);
  }

  private void setHealth(Backend b, ReplicaHealth health) {
    if (b.replica.health() != health) {
      b.replica = b.replica.withHealth(health);
      publish();
    }
  }

  private void publish() {
    List<Replica> list = new ArrayList<>(backends.size());
    for (Backend b : backends.values()) {
      list.add(b.replica);
    }
    replicas = List.copyOf(list);
  }

  /** One backend: identity, base URL, and the state its scrapes and failures build. */
  static final class Backend {
    final String id;
    final URI baseUrl;
    final ThroughputTracker tracker = new ThroughputTracker();
    Replica replica; // guarded by the pool
    int scrapeFailures; // guarded by the pool: consecutive failed scrapes
    long failedAtNanos; // guarded by the pool; 0 = no recent failure

    Backend(String id, URI baseUrl) {
      this.id = id;
      this.baseUrl = baseUrl;
      this.replica = Replica.builder(id).address(baseUrl.toString())
          .health(ReplicaHealth.UNHEALTHY).build();
    }
  }
}
