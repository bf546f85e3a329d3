/**
 * The public API of affinity-router: immutable values ({@link io.affinityrouter.RoutingRequest},
 * {@link io.affinityrouter.Replica}, {@link io.affinityrouter.ReplicaLoad},
 * {@link io.affinityrouter.RoutingDecision}) and the {@link io.affinityrouter.Router} interface.
 *
 * <p>Every type in this package is null-marked: no parameter accepts {@code null} and no method
 * returns it; absent values are {@link java.util.Optional}. Implementations live in
 * {@code affinity-router-core} behind {@code AffinityRouter.builder()}.
 */
@NullMarked
package io.affinityrouter;

import org.jspecify.annotations.NullMarked;
