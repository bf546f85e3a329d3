package io.affinityrouter.core;

import io.affinityrouter.RequestLease;
import io.affinityrouter.spi.FleetLimits;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A lease that also holds a fleet-wide slot, freed once when the lease is released. A wrapper,
 * made only with fleet-wide limits on: the common lease carries no field for it. Thread-safe.
 */
final class GatedLease implements RequestLease {
  private final RequestLease lease;
  private final FleetLimits.Permit permit;
  private final AtomicBoolean released = new AtomicBoolean();

  GatedLease(RequestLease lease, FleetLimits.Permit permit) {
    this.lease = lease;
    this.permit = permit;
  }

  @Override
  public String replicaId() {
    return lease.replicaId();
  }

  @Override
  public void markFirstToken() {
    lease.markFirstToken();
  }

  @Override
  public void complete(int outputTokens) {
    lease.complete(outputTokens);
    free();
  }

  @Override
  public void close() {
    lease.close();
    free();
  }

  @Override
  public boolean isClosed() {
    return lease.isClosed();
  }

  private void free() {
    if (released.compareAndSet(false, true)) {
      permit.release();
    }
  }

  @Override
  public String toString() {
    return lease + "+slot";
  }
}
