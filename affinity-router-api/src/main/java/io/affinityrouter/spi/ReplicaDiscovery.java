package io.affinityrouter.spi;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Where a fleet's replicas come from: a fixed list from configuration ({@link #fixed}), Kubernetes
 * EndpointSlices, a Spring Cloud {@code DiscoveryClient}, a service registry.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>Poll.</b> {@link #endpoints()} returns the current set, whole, in a stable order. The
 *       fleet view calls it on its own scheduler thread, never on a routing thread, once per its
 *       discovery interval; it may take a little time (a registry's local cache), but an
 *       implementation talking to a remote registry should answer from what it last fetched and
 *       refresh in the background.
 *   <li><b>Push.</b> An implementation that learns of changes as they happen announces them through
 *       {@link #watch}: each call passes the whole new set, on any thread; the fleet view applies it
 *       on its own thread without waiting for the next poll.
 *   <li><b>Identity.</b> Endpoints are told apart by {@link ReplicaEndpoint#id()}; when two share an
 *       id, the first counts. An endpoint whose other fields change is treated as a new replica
 *       (its health and load start over).
 *   <li><b>Failure.</b> An exception from {@link #endpoints()} means "unknown now": the fleet view
 *       keeps the set it had. An empty list means the fleet has no replicas.
 *   <li>Implementations are thread-safe. The fleet view does not close a discovery it was given.
 * </ul>
 */
@FunctionalInterface
public interface ReplicaDiscovery {

  /**
   * The replicas that exist now.
   *
   * @return the endpoints, never null (may be empty)
   */
  List<ReplicaEndpoint> endpoints();

  /**
   * Registers {@code onChange} to hear of every change to the set of endpoints, with the whole new
   * set. The default implementation never calls it (a discovery that can only be polled).
   *
   * @param onChange called with the new set on any thread; must be fast
   * @return closing it stops the notifications; idempotent
   */
  default AutoCloseable watch(Consumer<List<ReplicaEndpoint>> onChange) {
    Objects.requireNonNull(onChange, "onChange");
    return () -> {};
  }

  /**
   * A discovery that always returns {@code endpoints}: replicas from configuration.
   *
   * @throws NullPointerException if {@code endpoints} or one of them is null
   */
  static ReplicaDiscovery fixed(Collection<ReplicaEndpoint> endpoints) {
    List<ReplicaEndpoint> copy = List.copyOf(new ArrayList<>(endpoints));
    return () -> copy;
  }
}
