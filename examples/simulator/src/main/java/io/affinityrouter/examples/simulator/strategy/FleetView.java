package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.List;

/**
 * What one gateway knows of the fleet when it routes a request: the replicas it may pick (with their
 * last scraped {@link io.affinityrouter.ReplicaLoad}, stale by up to the scrape interval), its own
 * outstanding requests per replica, and, for routers that subscribe to engines' KV events, each
 * engine's exact cache content.
 *
 * <p>Valid only during the {@link RoutingStrategy#route} call it is passed to; not thread-safe.
 */
public interface FleetView {
  /** Simulated time now, in nanoseconds since the start of the run. */
  long nowNanos();

  /** The replicas that may be picked (ready and not lost), with scraped loads. */
  List<Replica> replicas();

  /** The fleet index of a replica in {@link #replicas()}. */
  int indexOf(Replica replica);

  /** Requests this gateway sent to the replica that have not finished. */
  int localInFlight(int replicaIndex);

  /**
   * The prompt tokens of {@code request} cached on the replica right now, as KV events would tell a
   * subscribed router.
   */
  int exactCachedTokens(int replicaIndex, SimRequest request);

  /** Tokens per KV block on the engines. */
  int blockSize();

  /** The replica's KV capacity in tokens. */
  long kvCapacityTokens(int replicaIndex);

  /** When the replica became ready, in simulated nanoseconds (0 for the initial fleet). */
  long readySinceNanos(int replicaIndex);
}
