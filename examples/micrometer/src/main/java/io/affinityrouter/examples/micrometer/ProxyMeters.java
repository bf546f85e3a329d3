package io.affinityrouter.examples.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Meters of a gateway's proxying: requests in flight per replica (routed, lease not yet closed),
 * answers from backends that were errors, by status, and requests the gateway refused, by status
 * and code.
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>what</th></tr>
 *   <tr><td>{@value #IN_FLIGHT}</td><td>gauge</td><td>replica</td>
 *       <td>routed requests whose lease is open</td></tr>
 *   <tr><td>{@value #UPSTREAM_ERRORS}</td><td>counter</td><td>replica, status</td>
 *       <td>backend answers with status &ge; 400, and transport failures ({@code 502}, {@code 504}
 *       as answered to the client)</td></tr>
 *   <tr><td>{@value #REJECTED}</td><td>counter</td><td>status, code</td>
 *       <td>requests answered with an error by the gateway itself</td></tr>
 * </table>
 *
 * <p>Replica ids come from the gateway's configuration, codes and statuses from its own answers: the
 * tag values are bounded. Thread-safe, never blocks.
 */
public final class ProxyMeters {
  /** Requests in flight, by replica. */
  public static final String IN_FLIGHT = "affinity.router.replica.in.flight";
  /** Backend errors, by replica and status. */
  public static final String UPSTREAM_ERRORS = "affinity.router.upstream.errors";
  /** Requests the gateway answered with an error, by status and code. */
  public static final String REJECTED = "affinity.router.gateway.rejected";

  private final MeterRegistry registry;
  private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
  private final Map<String, Counter> upstreamErrors = new ConcurrentHashMap<>();
  private final Map<String, Counter> rejected = new ConcurrentHashMap<>();

  /** Creates the meters in {@code registry}, each when first needed. */
  public ProxyMeters(MeterRegistry registry) {
    this.registry = Objects.requireNonNull(registry, "registry");
  }

  /** Registers the in-flight gauge of {@code replicaId} at 0 (so it shows before any request). */
  public void register(String replicaId) {
    gauge(replicaId);
  }

  /** A request was routed to {@code replicaId} (its lease opened). */
  public void leaseOpened(String replicaId) {
    gauge(replicaId).incrementAndGet();
  }

  /** A lease opened on {@code replicaId} was closed. */
  public void leaseClosed(String replicaId) {
    gauge(replicaId).decrementAndGet();
  }

  /** Requests in flight on {@code replicaId} now. */
  public int inFlight(String replicaId) {
    AtomicInteger n = inFlight.get(replicaId);
    return n == null ? 0 : n.get();
  }

  /** {@code replicaId} answered (or failed as) {@code status}. */
  public void upstreamError(String replicaId, int status) {
    upstreamErrors.computeIfAbsent(replicaId + '\0' + status, k -> Counter.builder(UPSTREAM_ERRORS)
        .description("Backend answers with an error status, and transport failures")
        .tag("replica", replicaId)
        .tag("status", Integer.toString(status))
        .register(registry)).increment();
  }

  /** The gateway answered {@code status} with error code {@code code}. */
  public void rejected(int status, String code) {
    rejected.computeIfAbsent(status + "\0" + code, k -> Counter.builder(REJECTED)
        .description("Requests the gateway answered with an error")
        .tag("status", Integer.toString(status))
        .tag("code", code)
        .register(registry)).increment();
  }

  private AtomicInteger gauge(String replicaId) {
    return inFlight.computeIfAbsent(replicaId, id -> {
      AtomicInteger n = new AtomicInteger();
      Gauge.builder(IN_FLIGHT, n, AtomicInteger::get)
          .description("Routed requests whose lease is open")
          .tag("replica", id)
          .register(registry);
      return n;
    });
  }
}
