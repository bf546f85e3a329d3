package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link FleetView} set by hand for strategy tests: replicas {@code replica-0..n-1}, this
 * gateway's in-flight counts, the scraped waiting queues and KV usage, the tokens KV events report
 * cached (per replica, whatever the request) and the simulated time (0 unless set). Not
 * thread-safe.
 */
final class FakeFleet implements FleetView {
  private final List<Replica> replicas = new ArrayList<>();
  private final int[] inFlight;
  private final int[] cachedTokens;
  private final int blockSize;
  private final long kvCapacityTokens;
  private long nowNanos;

  FakeFleet(int replicas) {
    this(replicas, 16, 67_659L * 16);
  }

  FakeFleet(int replicas, int blockSize, long kvCapacityTokens) {
    for (int i = 0; i < replicas; i++) {
      this.replicas.add(Replica.of("replica-" + i));
    }
    this.inFlight = new int[replicas];
    this.cachedTokens = new int[replicas];
    this.blockSize = blockSize;
    this.kvCapacityTokens = kvCapacityTokens;
  }

  /** Sets this gateway's in-flight requests, replica by replica. */
  FakeFleet inFlight(int... counts) {
    System.arraycopy(counts, 0, inFlight, 0, counts.length);
    return this;
  }

  /** Sets the prompt tokens a replica's engine holds cached for any request (0 by default). */
  FakeFleet cached(int replica, int tokens) {
    cachedTokens[replica] = tokens;
    return this;
  }

  /** Sets the scraped waiting queue of a replica. */
  FakeFleet waiting(int replica, int requests) {
    Replica r = replicas.get(replica);
    replicas.set(replica, r.withLoad(r.load().toBuilder().waitingRequests(requests).build()));
    return this;
  }

  /** Sets the scraped KV usage (0 to 1) of a replica. */
  FakeFleet kvUsage(int replica, double usage) {
    Replica r = replicas.get(replica);
    replicas.set(replica, r.withLoad(r.load().toBuilder().kvUsage(usage).build()));
    return this;
  }

  /** Sets the simulated time (0 unless set). */
  FakeFleet now(long nanos) {
    nowNanos = nanos;
    return this;
  }

  @Override
  public long nowNanos() {
    return nowNanos;
  }

  @Override
  public List<Replica> replicas() {
    return replicas;
  }

  @Override
  public int indexOf(Replica replica) {
    return Integer.parseInt(replica.id().substring("replica-".length()));
  }

  @Override
  public int localInFlight(int replicaIndex) {
    return inFlight[replicaIndex];
  }

  @Override
  public int exactCachedTokens(int replicaIndex, SimRequest request) {
    return cachedTokens[replicaIndex];
  }

  @Override
  public int blockSize() {
    return blockSize;
  }

  @Override
  public long kvCapacityTokens(int replicaIndex) {
    return kvCapacityTokens;
  }

  @Override
  public long readySinceNanos(int replicaIndex) {
    return 0;
  }
}
