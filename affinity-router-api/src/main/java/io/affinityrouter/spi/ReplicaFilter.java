package io.affinityrouter.spi;

import io.affinityrouter.Replica;
import io.affinityrouter.RoutingRequest;

/**
 * Rules replicas out for a request (e.g. a zone, a hardware class, a LoRA adapter not loaded).
 * A replica that any filter rejects is not eligible: no new session goes there, and a session bound
 * to it is repinned ({@link io.affinityrouter.RepinCause#REPLICA_FILTERED}).
 *
 * <p>Called on the routing thread for every replica of every request: fast, thread-safe, non-blocking.
 * An exception counts as a rejection and is reported to {@link RoutingListener#onPluginFailure}.
 */
public interface ReplicaFilter {

  /** A short name for explanations and metrics. */
  String name();

  /** Whether {@code replica} may serve {@code request}. */
  boolean accepts(RoutingRequest request, Replica replica);
}
