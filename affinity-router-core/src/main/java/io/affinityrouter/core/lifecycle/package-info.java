/**
 * Which models sleep and where they wake: {@link io.affinityrouter.core.lifecycle.ModelClaim}s say
 * what each model needs, {@link io.affinityrouter.core.lifecycle.ModelLifecycle} decides sleep and
 * wake actions from the claims, the fleet's model states and the router's traffic, and carries them
 * out through a {@link io.affinityrouter.core.lifecycle.ModelActuator} (a
 * {@link io.affinityrouter.core.engine.FleetView}'s sleep mode by default) while it holds a
 * {@link io.affinityrouter.spi.LifecycleLease}, so that of several gateways only one acts.
 *
 * <p>{@link io.affinityrouter.Unstable}: this package may still change incompatibly in a minor
 * release.
 */
@NullMarked
@Unstable
package io.affinityrouter.core.lifecycle;

import io.affinityrouter.Unstable;
import org.jspecify.annotations.NullMarked;
