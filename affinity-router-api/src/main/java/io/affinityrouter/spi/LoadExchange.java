package io.affinityrouter.spi;

import io.affinityrouter.internal.Checks;
import io.affinityrouter.internal.LoadExchanges;
import java.util.Map;

/**
 * Lets the routers (gateways) of one fleet see the prefill work the others have queued on each
 * replica, and the session turns they route there. Each router knows exactly what it sent itself
 * and only coarsely what others sent (the engines' waiting-request counts, stale by a scrape): a
 * replica another gateway just gave a 100k-token prompt looks idle to every other gateway until its
 * queue shows up in a scrape, and only as one waiting request. With an exchange, every router
 * publishes its own estimate of the seconds of prefill it has queued per replica, and adds what the
 * others published to its own. Through {@link #share} it also publishes the rate of session turns
 * it routes to each replica: no scrape shows the sessions bound to a replica between their turns,
 * and each turn is routed by exactly one router, so the rates add up to the fleet's.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>One call per interval.</b> The router calls {@link #share} (whose default calls
 *       {@link #exchange}) at most once per its configured interval, from a decision thread,
 *       passing its whole current view; the publication replaces the router's previous one.
 *   <li><b>Never blocks.</b> An implementation backed by a remote store sends the publication in the
 *       background and returns what its last completed read saw; the router's decision does not wait
 *       for any I/O.
 *   <li><b>Others only, as of now.</b> The result sums the other routers' publications per replica,
 *       never the caller's own, each reduced by the time since it was published (queued prefill
 *       drains as the engine works: a publication {@code t} seconds old counts {@code t} seconds
 *       less, and never below zero). Publications older than the implementation's staleness limit
 *       (a router that stopped) count nothing.
 *   <li><b>Failures</b> never reach the caller as exceptions from a remote store: the last known view
 *       is returned (drained as above). Methods throw only for programmer errors.
 *   <li>Implementations are thread-safe.
 * </ul>
 */
public interface LoadExchange extends AutoCloseable {

  /**
   * Publishes this router's queued prefill per replica and returns the other routers' as of
   * {@code nowMillis}.
   *
   * @param routerId this router's id, unique among the routers sharing the exchange
   * @param queuedSeconds replica id → estimated seconds of prefill this router has queued there and
   *     not yet done (replicas with none may be left out)
   * @param nowMillis the router's clock, epoch milliseconds (the routers' clocks are assumed to
   *     agree to within a small fraction of the exchange interval)
   * @return replica id → seconds of prefill the other routers have queued there (replicas with none
   *     may be left out); never null
   * @throws IllegalArgumentException if {@code routerId} is blank or a value is negative or not
   *     finite
   */
  Map<String, Double> exchange(String routerId, Map<String, Double> queuedSeconds, long nowMillis);

  /**
   * What one router shares about one replica.
   *
   * @param queuedSeconds estimated seconds of prefill queued there and not done yet (as
   *     {@link #exchange}'s)
   * @param sessionTurnsPerSecond session turns per second routed there lately: a level, not drained
   *     with age
   */
  record Share(double queuedSeconds, double sessionTurnsPerSecond) {
    /**
     * Checks the figures.
     *
     * @throws IllegalArgumentException if a figure is negative or not finite
     */
    public Share {
      Checks.nonNegativeFinite(queuedSeconds, "queuedSeconds");
      Checks.nonNegativeFinite(sessionTurnsPerSecond, "sessionTurnsPerSecond");
    }
  }

  /**
   * As {@link #exchange}, with each replica's session turn rate too: publishes this router's shares
   * and returns the other routers' as of {@code nowMillis}, queued seconds drained by age as
   * {@link #exchange} says, turn rates summed as published (publications past the staleness limit
   * count nothing). The default shares queued seconds only, through {@link #exchange}, and reports
   * no turns; the library's exchanges share both.
   *
   * @param mine replica id → this router's share there (replicas with none may be left out)
   * @return replica id → the other routers' shares there (replicas with none may be left out);
   *     never null
   * @throws IllegalArgumentException if {@code routerId} is blank
   */
  default Map<String, Share> share(String routerId, Map<String, Share> mine, long nowMillis) {
    LoadExchanges.checkShares(routerId, mine);
    return LoadExchanges.shares(exchange(routerId, LoadExchanges.queued(mine), nowMillis));
  }

  /** Releases the exchange's resources (connections it owns). Idempotent. */
  @Override
  void close();
}
