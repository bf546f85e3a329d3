package io.affinityrouter.examples.micrometer;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;

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
 *   <tr><td>{@value #HELD}</td><td>gauge</td><td></td>
 *       <td>requests the router holds for room now ({@code Router.heldRequests()})</td></tr>
 *   <tr><td>{@value #HOLD_WAIT}</td><td>timer</td><td>outcome, tenant</td>
 *       <td>how long held requests waited, by how they ended: {@code admitted}, {@code refused}
 *       (their deadline passed or the queue was full) or {@code cancelled} (the client left)</td></tr>
 *   <tr><td>{@value #REFUSALS}</td><td>counter</td><td>reason, tenant</td>
 *       <td>requests the router did not route, by its reason</td></tr>
 * </table>
 *
 * <p>Replica ids come from the gateway's configuration, codes and statuses from its own answers;
 * tenants from a header, so only the first {@value #MAX_TENANT_TAGS} tenants seen get their own tag,
 * later ones share {@value #OTHER_TENANT}: the tag values are bounded. Thread-safe, never blocks.
 */
public final class ProxyMeters {
  /** Requests in flight, by replica. */
  public static final String IN_FLIGHT = "affinity.router.replica.in.flight";
  /** Backend errors, by replica and status. */
  public static final String UPSTREAM_ERRORS = "affinity.router.upstream.errors";
  /** Requests the gateway answered with an error, by status and code. */
  public static final String REJECTED = "affinity.router.gateway.rejected";
  /** Requests held for room now. */
  public static final String HELD = "affinity.router.gateway.held";
  /** Time held, by outcome and tenant. */
  public static final String HOLD_WAIT = "affinity.router.gateway.hold.wait";
  /** Requests not routed, by reason and tenant. */
  public static final String REFUSALS = "affinity.router.gateway.refusals";
  /** The tenants that get their own tag value. */
  public static final int MAX_TENANT_TAGS = 100;
  /** The tenant tag of requests without one. */
  public static final String NO_TENANT = "none";
  /** The tenant tag past the first {@value #MAX_TENANT_TAGS}. */
  public static final String OTHER_TENANT = "other";

  private final MeterRegistry registry;
  private final Map<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
  private final Map<String, Counter> upstreamErrors = new ConcurrentHashMap<>();
  private final Map<String, Counter> rejected = new ConcurrentHashMap<>();
  private final Map<String, Timer> holdWaits = new ConcurrentHashMap<>();
  private final Map<String, Counter> refusals = new ConcurrentHashMap<>();
  private final Map<String, Boolean> tenants = new ConcurrentHashMap<>();

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

  /** Publishes {@code held} (the router's held requests) as {@value #HELD}. */
  public void heldRequests(IntSupplier held) {
    Objects.requireNonNull(held, "held");
    Gauge.builder(HELD, held, h -> h.getAsInt())
        .description("Requests held by the router until the fleet has room")
        .strongReference(true) // a method reference: nothing else keeps it
        .register(registry);
  }

  /**
   * A held request ended after {@code waited}: {@code outcome} is {@code admitted},
   * {@code refused} or {@code cancelled}.
   */
  public void holdEnded(String outcome, String tenant, Duration waited) {
    String t = tenantTag(tenant);
    holdWaits.computeIfAbsent(outcome + '\0' + t, k -> Timer.builder(HOLD_WAIT)
        .description("Time requests were held before admission, refusal or cancellation")
        .tag("outcome", outcome)
        .tag("tenant", t)
        .register(registry)).record(waited.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** The router did not route a request of {@code tenant}, for {@code reason}. */
  public void refused(String reason, String tenant) {
    String t = tenantTag(tenant);
    String r = reason.toLowerCase(Locale.ROOT);
    refusals.computeIfAbsent(r + '\0' + t, k -> Counter.builder(REFUSALS)
        .description("Requests the router did not route, by reason")
        .tag("reason", r)
        .tag("tenant", t)
        .register(registry)).increment();
  }

  private String tenantTag(String tenant) {
    if (tenant == null || tenant.isEmpty()) {
      return NO_TENANT;
    }
    if (tenants.containsKey(tenant)) {
      return tenant;
    }
    if (tenants.size() < MAX_TENANT_TAGS) { // a race may admit a few more: still bounded
      tenants.putIfAbsent(tenant, Boolean.TRUE);
      return tenant;
    }
    return OTHER_TENANT;
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
