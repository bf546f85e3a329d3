/**
 * The routing engine: {@link io.affinityrouter.core.AffinityRouter#builder()} builds a
 * {@link io.affinityrouter.Router}.
 *
 * <p>The engine's parts live in sub-packages named after them: {@code prefix} (chained block hashing,
 * the bounded prefix index, KV-event mapping), {@code load} (in-flight accounting and leases),
 * {@code scoring} (the cost model in seconds of estimated TTFT), {@code pick} (least-cost-top-k with
 * ramp-up, rendezvous hashing), {@code binding} (the in-memory store, the provider registry, the store
 * circuit breaker) and {@code metrics} (Prometheus exposition parsers). Their public classes are
 * building blocks for tools such as the simulator and benchmarks; the supported API is the builder,
 * the stores' builders and the parsers.
 */
@NullMarked
package io.affinityrouter.core;

import org.jspecify.annotations.NullMarked;
