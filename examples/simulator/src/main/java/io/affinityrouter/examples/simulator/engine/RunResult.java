package io.affinityrouter.examples.simulator.engine;

import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;

/**
 * What one strategy did on one workload. Immutable by convention (the histograms and arrays must not
 * be modified once the run returns); safe to read from any thread after that.
 *
 * @param strategy the strategy's name
 * @param workload the workload's name
 * @param requests requests in the workload
 * @param completed requests that finished
 * @param dropped requests never served: no replica could ever fit them, or their client gave up
 *     after its retries were refused (with the rest of its session)
 * @param notRouted times a strategy refused a request (a 429; its client retries it, a few times)
 * @param failedOver requests whose replica was lost while they ran (each retried)
 * @param inputTokens prompt tokens of the completed requests
 * @param cachedTokens prompt tokens found in the chosen replica's cache
 * @param boundTokens prompt tokens already seen anywhere before (the infinite-cache bound)
 * @param recomputedTokens prefilled tokens that had been computed before: prompt tokens within the
 *     bound (computed somewhere) and the tokens preempted requests computed again
 * @param outputTokens output tokens generated
 * @param ttftMicros time to first token from arrival at the gateway, µs
 * @param ttftFloorMicros per completed request, its TTFT floor ({@link #ttftFloorMillis}), µs
 * @param e2eMicros arrival to last token, µs
 * @param makespanNanos first arrival to last completion
 * @param busyNanos per replica, time spent in engine steps
 * @param moves session turns routed to another replica than the session's previous turn, by reason
 *     (sorted by reason)
 * @param repins session bindings moved by the strategy
 * @param loadSeries per scrape sample, each replica's running + waiting requests (-1 when not ready)
 * @param sampleNanos simulated time between two load samples
 * @param wakes times a request woke a replica's sleeping model
 * @param preemptions running requests the engines preempted for KV blocks (each time counted)
 * @param idealRequestsPerSecond the rate at which the same requests would be served had none
 *     waited for its first token beyond its floor and had each decoded at the run's mean time per
 *     output token (follow-up turns after their think times; first arrival to last end)
 * @param sessionP90Micros each session's own p90 TTFT, µs, sorted (a request without a session is
 *     a session of one)
 * @param heldRequests requests a gateway held in its queue (flow control) at least once
 * @param gateways gateways in front of the fleet, each with its own strategy instance
 * @param front how the load balancer before the gateways picked a request's gateway
 * @param repinsByCause the strategy's repins by cause (the part of the route's reason after
 *     {@code /}, the whole reason when it has none) and whether the session's previous turn came
 *     through another gateway, e.g. {@code REPLICA_OVERLOADED/other-gateway} (sorted)
 * @param crossGatewayTurns session turns whose previous turn came through another gateway
 * @param gaveUpNew sessions whose client gave up (its last retry refused) before any of their
 *     turns was served, session-less requests counted one each
 * @param gaveUpReturning sessions whose client gave up on a later turn, after earlier ones were
 *     served
 */
public record RunResult(String strategy, String workload, int requests, int completed,
    int dropped, long notRouted, long failedOver, long inputTokens, long cachedTokens,
    long boundTokens, long recomputedTokens, long outputTokens, Histogram ttftMicros,
    Histogram ttftFloorMicros, Histogram e2eMicros, long makespanNanos, long[] busyNanos,
    Map<String, Long> moves, long repins, List<int[]> loadSeries, long sampleNanos, long wakes,
    long preemptions, double idealRequestsPerSecond, long[] sessionP90Micros,
    long heldRequests, int gateways, SimulationConfig.Front front,
    Map<String, Long> repinsByCause, long crossGatewayTurns, long gaveUpNew,
    long gaveUpReturning) {

  /** The suffix of {@link #repinsByCause} keys whose previous turn came through another gateway. */
  public static final String OTHER_GATEWAY = "other-gateway";
  /** The suffix of the other {@link #repinsByCause} keys (same gateway, or a session's first turn). */
  public static final String SAME_GATEWAY = "same-gateway";

  /** Repins of turns whose previous turn came through another gateway, all causes. */
  public long crossGatewayRepins() {
    long n = 0;
    for (Map.Entry<String, Long> e : repinsByCause.entrySet()) {
      if (e.getKey().endsWith("/" + OTHER_GATEWAY)) {
        n += e.getValue();
      }
    }
    return n;
  }

  /**
   * The share of turns whose previous turn came through another gateway that the strategy repinned
   * (0 when there were none).
   */
  public double crossGatewayRepinRate() {
    return crossGatewayTurns == 0 ? 0 : (double) crossGatewayRepins() / crossGatewayTurns;
  }

  /**
   * The served rate over the ideal one: 1 when no request waited beyond its TTFT floor and every
   * replica decoded at the fleet's pace, lower when waits (queues, recomputation, an overloaded
   * replica's slower decode) held back later turns (closed loop) or the run's end.
   */
  public double servedRatio() {
    if (Double.isInfinite(idealRequestsPerSecond)) { // all at once: nothing paces them
      return requests == 0 ? 0 : (double) completed / requests;
    }
    return idealRequestsPerSecond <= 0 ? 0 : requestsPerSecond() / idealRequestsPerSecond;
  }

  /** Requests whose TTFT met {@code sloMillis}, per simulated second (first arrival to last end). */
  public double goodputPerSecond(double sloMillis) {
    if (makespanNanos == 0) {
      return 0;
    }
    long within = ttftMicros.getCountBetweenValues(0, (long) (sloMillis * 1000));
    return within / (makespanNanos / 1e9);
  }

  /** The share of sessions whose own p90 TTFT meets {@code sloMillis} (0 if none was served). */
  public double sessionSloAttainment(double sloMillis) {
    if (sessionP90Micros.length == 0) {
      return 0;
    }
    long limit = (long) (sloMillis * 1000);
    int lo = 0;
    int hi = sessionP90Micros.length;
    while (lo < hi) { // first index past the limit
      int mid = (lo + hi) >>> 1;
      if (sessionP90Micros[mid] <= limit) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return (double) lo / sessionP90Micros.length;
  }

  /**
   * The gateways and the front door for a report's title, e.g. {@code 4 gateways, front door by
   * session}; empty with one gateway, where the front door picks nothing.
   */
  public String frontDoor() {
    return gateways <= 1 ? "" : gateways + " gateways, front door by " + front.label();
  }

  /** Requests that never completed (dropped, or still waiting when the run ended). */
  public int notCompleted() {
    return requests - completed;
  }

  /** Cached prompt tokens over prompt tokens. */
  public double hitRate() {
    return inputTokens == 0 ? 0 : (double) cachedTokens / inputTokens;
  }

  /** The infinite-cache bound's hit rate for the same requests. */
  public double boundRate() {
    return inputTokens == 0 ? 0 : (double) boundTokens / inputTokens;
  }

  /** Hit rate as a fraction of the bound. */
  public double ofBound() {
    return boundTokens == 0 ? 0 : (double) cachedTokens / boundTokens;
  }

  /** Completed requests per simulated second. */
  public double requestsPerSecond() {
    return makespanNanos == 0 ? 0 : completed / (makespanNanos / 1e9);
  }

  /** Output tokens per simulated second. */
  public double outputTokensPerSecond() {
    return makespanNanos == 0 ? 0 : outputTokens / (makespanNanos / 1e9);
  }

  /** The busiest replica's busy time over the mean busy time (1 = perfectly even). */
  public double busiestOverMean() {
    long max = 0;
    long sum = 0;
    int n = 0;
    for (long b : busyNanos) {
      max = Math.max(max, b);
      sum += b;
      n++;
    }
    return sum == 0 ? 0 : max / ((double) sum / n);
  }

  /** Session turns that left their replica, all reasons. */
  public long movedTurns() {
    long n = 0;
    for (long v : moves.values()) {
      n += v;
    }
    return n;
  }

  /** TTFT percentile in milliseconds. */
  public double ttftMillis(double percentile) {
    return ttftMicros.getValueAtPercentile(percentile) / 1000.0;
  }

  /**
   * A percentile of the requests' TTFT floors, milliseconds: what the same requests' TTFT would be
   * with every prompt cached as far as the infinite-cache bound allows and prefilled alone on an
   * idle replica
   * ({@link io.affinityrouter.examples.simulator.fleet.CostModel#prefillFloorMicros}).
   * No strategy's TTFT percentile can be lower; the floor is the same for every strategy that
   * completes the same requests.
   */
  public double ttftFloorMillis(double percentile) {
    return ttftFloorMicros.getValueAtPercentile(percentile) / 1000.0;
  }

  /** End-to-end latency percentile in seconds. */
  public double e2eSeconds(double percentile) {
    return e2eMicros.getValueAtPercentile(percentile) / 1e6;
  }
}
