package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.RequestLease;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * A strategy's choice for one request.
 *
 * @param replicaIndex the fleet index of the chosen replica
 * @param reason why, in the strategy's own words (e.g. {@code prefix}, {@code load},
 *     {@code SESSION_REPINNED/REPLICA_OVERLOADED}); reports count session turns that left their
 *     replica by this reason
 * @param repin whether the strategy moved a pinned session (a binding changed)
 * @param lease the real router's lease, closed when the request finishes; null for emulations
 * @param later for {@link #later}: the route the strategy's own queue gives the request when it
 *     admits it (null in the stage: refused); else null
 */
public record Route(int replicaIndex, String reason, boolean repin,
    @Nullable RequestLease lease, @Nullable CompletionStage<@Nullable Route> later) {

  /** A route chosen now. */
  public Route(int replicaIndex, String reason, boolean repin, @Nullable RequestLease lease) {
    this(replicaIndex, reason, repin, lease, null);
  }

  /**
   * The strategy holds the request in its own queue (the real router's admission): the route comes
   * when {@code later} completes, with null if the request is refused.
   */
  public static Route later(CompletionStage<@Nullable Route> later) {
    return new Route(-1, "held", false, null, java.util.Objects.requireNonNull(later, "later"));
  }

  /** Whether this is a {@link #later} route. */
  public boolean deferred() {
    return later != null;
  }

  /**
   * The gateway holds the request in its queue (flow control): it is offered again, first in first
   * out, when this gateway's loads are scraped or one of its requests finishes.
   */
  public static final Route HOLD = new Route(-1, "held", false, null);

  /** Whether this is {@link #HOLD}. */
  public boolean held() {
    return this == HOLD;
  }

  /** A route of an emulated strategy (no binding, no lease). */
  public static Route of(int replicaIndex, String reason) {
    return new Route(replicaIndex, reason, false, null);
  }
}
