/**
 * The fleet view: the router's live {@code List<Replica>}, built from the engines themselves.
 *
 * <ul>
 *   <li>{@link io.affinityrouter.core.engine.FleetView}: replicas from configuration or a
 *       {@link io.affinityrouter.spi.ReplicaDiscovery}, each scraped at its {@code /metrics} on an
 *       interval (parsed with {@link io.affinityrouter.core.metrics.EngineMetrics}), with health
 *       from scrape and passive failures and recovery by exponential backoff, published as
 *       immutable snapshots for {@code router.select(request, fleet.replicas())};
 *   <li>vLLM sleep mode: {@code POST /wake_up}, {@code POST /sleep}, {@code GET /is_sleeping}
 *       ({@link io.affinityrouter.core.engine.FleetView#wakeUp}), and a
 *       {@link io.affinityrouter.spi.RoutingListener} that wakes a sleeping model when the router
 *       asks ({@link io.affinityrouter.core.engine.FleetView#wakeListener()});
 *   <li>{@link io.affinityrouter.core.engine.EngineActionResult}: what such an action came to, as a
 *       value.
 * </ul>
 *
 * <p>Only the JDK's {@code java.net.http.HttpClient}. Null-marked: no parameter accepts
 * {@code null} and no method returns it.
 *
 * <p>{@link io.affinityrouter.Unstable}: this package may still change incompatibly in a minor
 * release.
 */
@NullMarked
@Unstable
package io.affinityrouter.core.engine;

import io.affinityrouter.Unstable;
import org.jspecify.annotations.NullMarked;
