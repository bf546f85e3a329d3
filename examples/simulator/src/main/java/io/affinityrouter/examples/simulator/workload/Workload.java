package io.affinityrouter.examples.simulator.workload;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * A named set of request chains: each chain's first request arrives at its
 * {@link SimRequest#delayNanos()}; each follow-up turn arrives its own delay after the previous turn
 * finishes (closed loop). Trace workloads are chains of length one (open loop).
 *
 * <p>Immutable and thread-safe once built; the same workload is replayed for every strategy.
 *
 * @param name shown in reports
 * @param heads the first request of each chain, by arrival time
 */
public record Workload(String name, List<SimRequest> heads) {

  /**
   * Validates and sorts the chains by arrival time (stable, so equal times keep their order).
   *
   * @throws IllegalArgumentException if there is no request
   */
  public Workload {
    if (heads.isEmpty()) {
      throw new IllegalArgumentException("heads: empty (expected: at least one request)");
    }
    List<SimRequest> sorted = new ArrayList<>(heads);
    sorted.sort(Comparator.comparingLong(SimRequest::delayNanos));
    heads = List.copyOf(sorted);
  }

  /** All requests, chains flattened in arrival order of their heads. */
  public List<SimRequest> allRequests() {
    List<SimRequest> out = new ArrayList<>();
    for (SimRequest h : heads) {
      for (SimRequest r = h; r != null; r = r.next()) {
        out.add(r);
      }
    }
    return out;
  }

  /** The number of requests. */
  public int size() {
    int n = 0;
    for (SimRequest h : heads) {
      for (SimRequest r = h; r != null; r = r.next()) {
        n++;
      }
    }
    return n;
  }

  /**
   * The rate, requests per second, at which a fleet with no latency at all would serve these
   * requests: every request completes as it arrives, and a follow-up turn arrives its think time
   * later. Requests over the span from the first arrival to the last; {@code +Inf} when every
   * request arrives at once.
   */
  public double idealRequestsPerSecond() {
    long first = heads.get(0).delayNanos();
    long last = first;
    for (SimRequest h : heads) {
      long t = h.delayNanos();
      for (SimRequest r = h.next(); r != null; r = r.next()) {
        t += r.delayNanos();
      }
      last = Math.max(last, t);
    }
    return last == first ? Double.POSITIVE_INFINITY : size() / ((last - first) / 1e9);
  }

  /** The first head's arrival to the last head's, in nanoseconds. */
  public long spanNanos() {
    return heads.get(heads.size() - 1).delayNanos() - heads.get(0).delayNanos();
  }

  /**
   * Returns the workload with head arrival times compressed by {@code speedUp} (arrivals
   * {@code speedUp} times as frequent) and shifted to start at 0; think times are unchanged.
   *
   * @throws IllegalArgumentException if {@code speedUp} is not positive and finite
   */
  public Workload compressed(double speedUp) {
    if (!(speedUp > 0) || Double.isInfinite(speedUp)) {
      throw new IllegalArgumentException("speedUp: " + speedUp + " (expected: > 0 and finite)");
    }
    long start = heads.get(0).delayNanos();
    List<SimRequest> out = new ArrayList<>(heads.size());
    for (SimRequest h : heads) {
      out.add(h.withDelay(Math.round((h.delayNanos() - start) / speedUp)));
    }
    return new Workload(name, out);
  }
}
