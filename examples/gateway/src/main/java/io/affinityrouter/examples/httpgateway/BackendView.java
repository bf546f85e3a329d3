package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.Replica;
import java.util.List;

/**
 * What the request path needs of the gateway's view of its backends: the replicas to route over, a
 * way to report a backend that failed a request, and whether the view has been filled yet. The
 * gateway adapts {@link BackendPool} to it; any other fleet view can stand in.
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

  /** The view of {@code pool}. */
  static BackendView of(BackendPool pool) {
    return new BackendView() {
      @Override
      public List<Replica> replicas() {
        return pool.replicas();
      }

      @Override
      public void markFailed(String replicaId) {
        pool.markFailed(replicaId);
      }

      @Override
      public boolean hasSnapshot() {
        return pool.hasScraped();
      }
    };
  }
}
