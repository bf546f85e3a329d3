package io.affinityrouter.core;

import io.affinityrouter.RepinCause;
import io.affinityrouter.RoutingReason;
import org.jspecify.annotations.Nullable;

/**
 * Where a routed decision goes and why: the replica's index in the selection, the reason, the
 * binding's generation, whether the store was bypassed, the repin cause and the replica left
 * behind, whether the session's existing binding was kept ({@code bound}), and whether a share of
 * the prompt is taken as cached there although this router's index does not know it
 * ({@code assumeCached}).
 */
record Route(int replica, RoutingReason reason, long generation, boolean degraded,
    @Nullable RepinCause cause, @Nullable String previous, boolean bound, boolean assumeCached) {

  /** A request without a session, to the picker's choice. */
  static Route best(int replica) {
    return new Route(replica, RoutingReason.BEST_SCORE, 0, false, null, null, false, false);
  }

  /** A session routed without the store's answer. */
  static Route degraded(int replica) {
    return new Route(replica, RoutingReason.DEGRADED_FALLBACK, 0, true, null, null, false, false);
  }

  /** A session claimed, kept or adopted where the store's binding points. */
  static Route session(int replica, RoutingReason reason, long generation, boolean bound,
      boolean assumeCached) {
    return new Route(replica, reason, generation, false, null, null, bound, assumeCached);
  }

  /** A session moved off {@code previous} by a compare-and-set that won. */
  static Route repinned(int replica, long generation, RepinCause cause, String previous) {
    return new Route(replica, RoutingReason.SESSION_REPINNED, generation, false, cause, previous,
        false, false);
  }
}
