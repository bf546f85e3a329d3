package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * llm-d with its flow control on (the {@code flowControl} feature gate): the {@link
 * LlmdScorerStrategy} with {@link LlmdScorerStrategy#CURRENT} defaults picks the endpoint, but only
 * once the flow controller dispatches the request. Defaults of llm-d-router:
 *
 * <ul>
 *   <li>the utilization saturation detector ({@code pkg/epp/framework/plugins/flowcontrol/
 *       saturationdetector/utilization/config.go}, {@code detector.go}): the pool's saturation is
 *       the mean over endpoints of {@code max(waiting / 5, kvUsage / 0.8)}, an endpoint whose
 *       metrics are older than 200 ms counting 1, an empty pool 1;
 *   <li>the static usage limit, 1.0 ({@code usagelimits/usagelimitpolicy.go}): the dispatch cycle
 *       ({@code pkg/epp/flowcontrol/controller/internal/processor.go}) holds the band while
 *       saturation &ge; 1.0, head-of-line, and dispatches when it drops below;
 *   <li>FCFS ordering and global-strict fairness within a priority band ({@code
 *       pkg/epp/flowcontrol/registry/config.go}); the simulator's requests share one priority, so
 *       the gateway's FIFO ({@link Route#HOLD}) is that order;
 *   <li>a queued request still undispatched after 60 s ({@code defaultRequestTTL}, {@code
 *       pkg/epp/flowcontrol/controller/config.go}) is shed with a retryable 429: here refused
 *       (null), and the client retries it. The simulation offers a request here on arrival, or,
 *       when the gateway already holds some, once it reaches the head of the queue, and its TTL
 *       runs from then: a request behind others may wait longer than 60 s in all.
 * </ul>
 *
 * <p>The dispatch cycle runs every millisecond and takes at most one queued request a tick
 * ({@code processor.go}); the simulation offers held requests at scrapes and completions, so each
 * offer takes the ticks elapsed since the last one (from the first offer below saturation on). Not
 * emulated: the band's capacity of 5,000 requests and 1 GB, since the gateway queues a new arrival
 * behind held requests without offering it here. Not thread-safe (one per gateway).
 */
final class LlmdFlowControlStrategy implements RoutingStrategy {
  /** {@code DefaultQueueDepthThreshold}: waiting requests at which an endpoint is saturated. */
  static final int QUEUE_DEPTH_THRESHOLD = 5;

  /** {@code DefaultKVCacheUtilThreshold}: KV usage at which an endpoint is saturated. */
  static final double KV_CACHE_UTIL_THRESHOLD = 0.8;

  /** {@code DefaultMetricsStalenessThreshold}: older metrics count as a saturated endpoint. */
  static final long METRICS_STALENESS_NANOS = 200_000_000L;

  /** The static usage limit policy's threshold: the band is held at this saturation or above. */
  static final double USAGE_LIMIT = 1.0;

  /** {@code defaultRequestTTL}: the longest a request waits in the queue before it is shed. */
  static final long REQUEST_TTL_NANOS = 60_000_000_000L;

  /** The dispatch cycle's tick: at most one queued request leaves the queue per tick. */
  static final long DISPATCH_TICK_NANOS = 1_000_000L;

  /** Ticks of dispatch credit kept at most (a second's worth), so an idle queue does not bank. */
  static final double MAX_DISPATCH_CREDIT = 1000;

  private final LlmdScorerStrategy scorer;
  // request id -> when this gateway first held it, until it is dispatched or shed
  private final Map<Long, Long> queuedSince = new HashMap<>();
  // queued requests may leave at one per tick from when the pool was last seen below saturation
  private boolean saturated;
  private double credit;
  private long creditAt;

  LlmdFlowControlStrategy(long seed) {
    this.scorer = new LlmdScorerStrategy(seed, LlmdScorerStrategy.CURRENT);
  }

  /**
   * The pool's saturation: the mean over {@code endpoints} of {@code max(waiting /
   * QUEUE_DEPTH_THRESHOLD, kvUsage / KV_CACHE_UTIL_THRESHOLD)}, an endpoint counting 1 when its
   * metrics are older than {@link #METRICS_STALENESS_NANOS}; 1 for no endpoint.
   *
   * @param metricsAgeNanos how long ago the endpoints' metrics were scraped
   * @throws IllegalArgumentException if {@code metricsAgeNanos} is negative
   */
  static double saturation(List<Replica> endpoints, long metricsAgeNanos) {
    if (metricsAgeNanos < 0) {
      throw new IllegalArgumentException(
          "metricsAgeNanos: " + metricsAgeNanos + " (expected: >= 0)");
    }
    if (endpoints.isEmpty()) {
      return 1.0;
    }
    boolean stale = metricsAgeNanos > METRICS_STALENESS_NANOS;
    double total = 0;
    for (Replica r : endpoints) {
      if (stale) {
        total += 1.0; // fail closed: an endpoint not seen lately may be full
        continue;
      }
      ReplicaLoad load = r.load();
      double queue = (double) load.waitingRequests() / QUEUE_DEPTH_THRESHOLD;
      double kv = load.kvUsage().orElse(0.0) / KV_CACHE_UTIL_THRESHOLD;
      total += Math.max(queue, kv);
    }
    return total / endpoints.size();
  }

  @Override
  public @Nullable Route route(SimRequest request, FleetView fleet) {
    long now = fleet.nowNanos();
    // The simulation scrapes every endpoint together on schedule (50 ms for this entry), and the
    // view does not tell when; its metrics are never older than 200 ms, so they count as fresh.
    if (saturation(fleet.replicas(), 0) >= USAGE_LIMIT) {
      saturated = true;
      Long since = queuedSince.putIfAbsent(request.id(), now);
      if (since != null && now - since >= REQUEST_TTL_NANOS) {
        queuedSince.remove(request.id());
        return null; // shed after its TTL (429); the client sends it again
      }
      return Route.HOLD;
    }
    if (queuedSince.containsKey(request.id()) && !takeDispatchTick(now)) {
      return Route.HOLD; // paced: the next tick takes it
    }
    queuedSince.remove(request.id());
    return scorer.route(request, fleet);
  }

  /** Whether the dispatch cycle has a tick left for a queued request at {@code now}. */
  private boolean takeDispatchTick(long now) {
    if (saturated) { // the first cycle below saturation dispatches one
      saturated = false;
      credit = 1;
    } else {
      credit = Math.min(MAX_DISPATCH_CREDIT,
          credit + (double) (now - creditAt) / DISPATCH_TICK_NANOS);
    }
    creditAt = now;
    if (credit < 1) {
      return false;
    }
    credit -= 1;
    return true;
  }

  /** Requests this gateway holds (first held and neither dispatched nor shed since). */
  int queued() {
    return queuedSince.size();
  }

  @Override
  public void onFirstToken(SimRequest request, Route route) {
    scorer.onFirstToken(request, route);
  }

  @Override
  public void onFinished(SimRequest request, Route route, int outputTokens) {
    scorer.onFinished(request, route, outputTokens);
  }

  @Override
  public void onPrefixStored(String replicaId, SimRequest owner, int fromToken, int toToken) {
    scorer.onPrefixStored(replicaId, owner, fromToken, toToken);
  }

  @Override
  public void onSegmentEvicted(String replicaId, long segmentKey) {
    scorer.onSegmentEvicted(replicaId, segmentKey);
  }

  @Override
  public void onReplicaCleared(String replicaId) {
    scorer.onReplicaCleared(replicaId);
  }
}
