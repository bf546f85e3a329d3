package io.affinityrouter.core.engine;

import io.affinityrouter.ModelState;
import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.core.metrics.EngineMetrics;
import io.affinityrouter.core.metrics.ThroughputTracker;
import io.affinityrouter.spi.ReplicaEndpoint.Engine;
import io.affinityrouter.spi.ReplicaEndpoint;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * One replica's health state machine and its last {@link Replica}.
 *
 * <ul>
 *   <li>Never scraped: unhealthy (the router must not send work to a server it has not seen
 *       answer, nor guess which models it serves).
 *   <li>A scrape refused its connection, or {@code failuresToUnhealthy} scrapes failed in a row
 *       (timeout, non-200, a body without engine metrics), or the gateway reported a failed
 *       request: unhealthy, and not probed again before a backoff that doubles with each failure
 *       in a row ({@link Backoff}).
 *   <li>A successful scrape at or after the backoff: healthy, ready since then (the router ramps
 *       it up again), the failure counts reset.
 * </ul>
 *
 * <p>Not thread-safe: the fleet view calls it under its lock.
 */
final class TrackedReplica {
  /** How a scrape failed. */
  enum Failure {
    REFUSED, TIMEOUT, BAD_STATUS, BAD_BODY, IO
  }

  final ReplicaEndpoint endpoint;
  private final ThroughputTracker throughput = new ThroughputTracker();
  private final int failuresToUnhealthy;
  private final Backoff backoff;
  private Replica replica;
  private boolean scraped;
  private int failures;
  private int streak;
  private boolean backingOff;
  private long probeAtNanos;
  // read without the lock by actions and scrape set-up
  private volatile Engine seenKind = Engine.UNKNOWN;
  private volatile @Nullable Boolean sleepProbeSupported;
  private boolean memoryReleased; // SGLang memory released by this view: its models sleep
  @Nullable Scrape inFlight;

  TrackedReplica(ReplicaEndpoint endpoint, int failuresToUnhealthy, Backoff backoff) {
    this.endpoint = endpoint;
    this.failuresToUnhealthy = failuresToUnhealthy;
    this.backoff = backoff;
    Replica.Builder b = Replica.builder(endpoint.id()).address(endpoint.baseUri().toString())
        .health(ReplicaHealth.UNHEALTHY);
    endpoint.models().forEach(m -> b.model(m, ModelState.ACTIVE));
    this.replica = b.build();
  }

  Replica replica() {
    return replica;
  }

  boolean everScraped() {
    return scraped;
  }

  /** Whether a scrape may start now: none in flight, and not inside a backoff. */
  boolean due(long nowNanos) {
    return inFlight == null && (!backingOff || nowNanos - probeAtNanos >= 0);
  }

  /** The engine, as configured or as its metrics told. */
  Engine engine() {
    switch (endpoint.engine()) {
      case VLLM:
        return Engine.VLLM;
      case SGLANG:
        return Engine.SGLANG;
      default:
        return seenKind;
    }
  }

  /** Whether to ask {@code /is_sleeping} alongside the scrape. */
  boolean probeSleep() {
    return engine() != Engine.SGLANG && !Boolean.FALSE.equals(sleepProbeSupported);
  }

  /** The server answered {@code /is_sleeping} with 404: it runs without dev mode. */
  void sleepProbeUnsupported() {
    sleepProbeSupported = Boolean.FALSE;
  }

  /** Applies a successful scrape; {@code sleeping} is the {@code /is_sleeping} answer, if any. */
  void scraped(EngineMetrics metrics, Optional<Boolean> sleeping, long nowNanos, Instant now) {
    EngineMetrics m = throughput.update(metrics, nowNanos);
    if (m.engine() != Engine.UNKNOWN) {
      seenKind = m.engine();
    }
    scraped = true;
    failures = 0;
    Replica.Builder b = replica.toBuilder().models(models(m, sleeping)).load(m.replicaLoad());
    if (!backingOff || nowNanos - probeAtNanos >= 0) {
      backingOff = false;
      streak = 0;
      if (replica.health() != ReplicaHealth.HEALTHY) {
        b.health(ReplicaHealth.HEALTHY).readySince(now);
      }
    }
    replica = b.build();
  }

  private Map<String, ModelState> models(EngineMetrics m, Optional<Boolean> sleeping) {
    Map<String, ModelState> scrapedStates = m.modelStates();
    Map<String, ModelState> states = new LinkedHashMap<>();
    if (endpoint.models().isEmpty()) {
      states.putAll(scrapedStates);
    } else {
      ModelState only = scrapedStates.size() == 1 ? scrapedStates.values().iterator().next()
          : ModelState.ACTIVE;
      for (String model : endpoint.models()) {
        states.put(model, scrapedStates.getOrDefault(model, only));
      }
    }
    if (sleeping.isPresent()) {
      // The probe is the engine's own word, fresher than a metric some versions lack.
      ModelState state = sleeping.get() ? ModelState.SLEEPING : ModelState.ACTIVE;
      states.replaceAll((model, s) -> s == ModelState.LOADING ? s : state);
    }
    if (memoryReleased) {
      states.replaceAll((model, s) -> s == ModelState.LOADING ? s : ModelState.SLEEPING);
    }
    return states;
  }

  /**
   * Records that this view released (or resumed) the engine's memory, which the engine reports
   * nowhere: its models show {@code SLEEPING} until resumed. Under the view's lock.
   */
  void memoryReleased(boolean released) {
    memoryReleased = released;
    Map<String, ModelState> states = new LinkedHashMap<>(replica.models());
    states.replaceAll((model, s) -> s == ModelState.LOADING ? s
        : released ? ModelState.SLEEPING : ModelState.ACTIVE);
    replica = replica.toBuilder().models(states).build();
  }

  /** Applies a failed scrape. */
  void scrapeFailed(Failure failure, long nowNanos) {
    failures++;
    if (failure == Failure.REFUSED || failures >= failuresToUnhealthy || backingOff) {
      markDown(nowNanos);
    }
  }

  /** Applies a failed request reported by the gateway. */
  void passiveFailure(long nowNanos) {
    markDown(nowNanos);
  }

  private void markDown(long nowNanos) {
    if (backingOff && nowNanos - probeAtNanos < 0) {
      return; // already backing off: a burst of failures is one failure
    }
    streak++;
    backingOff = true;
    probeAtNanos = nowNanos + backoff.delayNanos(streak);
    if (replica.health() != ReplicaHealth.UNHEALTHY) {
      replica = replica.withHealth(ReplicaHealth.UNHEALTHY);
    }
  }

  /** When the next probe may start, if backing off. */
  Optional<Long> probeAtNanos() {
    return backingOff ? Optional.of(probeAtNanos) : Optional.empty();
  }

  /** A scrape in flight: completing it first settles it (answer, watchdog or close). */
  static final class Scrape {
    /** Completes after the outcome is applied (a round waits for it). */
    final java.util.concurrent.CompletableFuture<Void> done =
        new java.util.concurrent.CompletableFuture<>();
    /** Won by whichever settles it first: the answer, the watchdog, a removal or close. */
    final java.util.concurrent.atomic.AtomicBoolean settled =
        new java.util.concurrent.atomic.AtomicBoolean();
    final java.util.List<java.util.concurrent.Future<?>> cancelOnSettle =
        new java.util.concurrent.CopyOnWriteArrayList<>();

    void cancelAll() {
      for (java.util.concurrent.Future<?> f : cancelOnSettle) {
        f.cancel(true);
      }
    }
  }
}
