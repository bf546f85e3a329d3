package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.Replica;
import io.affinityrouter.core.engine.FleetView;
import java.io.IOException;
import java.util.List;

/**
 * What the request path needs of the gateway's view of its backends: the replicas to route over, a
 * way to report a backend that failed a request, and whether the view has been filled yet. The
 * gateway adapts the core's {@link FleetView} to it; tests wrap it to inject failures.
 *
 * <p>Implementations are thread-safe; {@link #replicas()} is called once per request and must not
 * block.
 */
interface BackendView {
  /** The replicas as currently known (an immutable list). */
  List<Replica> replicas();

  /** A request to {@code replicaId} failed at the transport level: stop sending it traffic. */
  void markFailed(String replicaId);

  /** Whether the view holds a first snapshot of the backends' state (readiness). */
  boolean hasSnapshot();

  /** The view of {@code fleet}: a failed request makes its backend unhealthy until re-probed. */
  static BackendView of(FleetView fleet) {
    return new BackendView() {
      @Override
      public List<Replica> replicas() {
        return fleet.replicas();
      }

      @Override
      public void markFailed(String replicaId) {
        fleet.reportFailure(replicaId, new IOException("a request to " + replicaId + " failed"));
      }

      @Override
      public boolean hasSnapshot() {
        return fleet.ready();
      }
    };
  }
}
