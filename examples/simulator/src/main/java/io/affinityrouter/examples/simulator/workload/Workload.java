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
   * How the heads' arrival times are spaced: a trace that logs time in ticks (the Mooncake
   * conversation trace: 12,031 requests at 1,180 timestamps, 3 s apart) has many requests at the
   * same instant.
   *
   * @param requests heads
   * @param distinct distinct arrival times among them
   * @param tickNanos the trace's tick: the smallest gap between two distinct arrival times (0 when
   *     all arrive at once)
   */
  public record Ties(int requests, int distinct, long tickNanos) {
    /** Whether far fewer distinct times than requests were logged (under half). */
    public boolean coarse() {
      return distinct * 2L < requests;
    }
  }

  /** The heads' arrival spacing. */
  public Ties ties() {
    int distinct = 1;
    long tick = Long.MAX_VALUE;
    for (int i = 1; i < heads.size(); i++) {
      long gap = heads.get(i).delayNanos() - heads.get(i - 1).delayNanos();
      if (gap > 0) {
        distinct++;
        tick = Math.min(tick, gap);
      }
    }
    return new Ties(heads.size(), distinct, tick == Long.MAX_VALUE ? 0 : tick);
  }

  /**
   * Returns the workload with the heads that share an arrival time spread uniformly over the
   * trace's tick ({@link Ties#tickNanos()}): each group at time {@code t} draws its offsets in
   * {@code [0, tick)} from {@code seed}, sorted so that the file's order is kept within the group
   * (and, as the tick is the smallest gap, across groups). A replay that sends a whole tick at the
   * same nanosecond lets a router that scores on scraped metrics send all of it to one replica
   * before the next scrape, which no real arrival process does.
   */
  public Workload spreadTies(long seed) {
    Ties t = ties();
    if (t.distinct() == t.requests() || t.tickNanos() <= 1) {
      return this;
    }
    java.util.SplittableRandom random = new java.util.SplittableRandom(seed ^ 0x5DEECE66DL);
    List<SimRequest> out = new ArrayList<>(heads.size());
    int i = 0;
    while (i < heads.size()) {
      int j = i;
      long at = heads.get(i).delayNanos();
      while (j < heads.size() && heads.get(j).delayNanos() == at) {
        j++;
      }
      long[] offsets = new long[j - i];
      for (int k = 0; k < offsets.length; k++) {
        offsets[k] = offsets.length == 1 ? 0 : random.nextLong(t.tickNanos());
      }
      java.util.Arrays.sort(offsets);
      for (int k = 0; k < offsets.length; k++) {
        out.add(heads.get(i + k).withDelay(at + offsets[k]));
      }
      i = j;
    }
    return new Workload(name, out);
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
