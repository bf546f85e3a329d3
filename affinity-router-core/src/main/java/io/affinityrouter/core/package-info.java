/**
 * The routing engine. {@link io.affinityrouter.core.AffinityRouter#builder()} builds a
 * {@link io.affinityrouter.Router}, its cost model calibrated by an
 * {@link io.affinityrouter.core.EngineProfile}; {@link io.affinityrouter.core.InMemoryBindingStore} and
 * {@link io.affinityrouter.core.InMemoryLoadExchange} share bindings and queued work between routers
 * in one JVM. Everything else here is package-private: the prefix hashing and index, the load
 * tracker and leases, the cost model, the picker and the pinning protocol are implementation, and
 * may change in any release.
 */
@NullMarked
package io.affinityrouter.core;

import org.jspecify.annotations.NullMarked;
