/**
 * Service-provider interfaces: what a plugin implements to extend the router.
 *
 * <ul>
 *   <li>{@link io.affinityrouter.spi.BindingStore} (found through
 *       {@link io.affinityrouter.spi.BindingStoreProvider} and {@link java.util.ServiceLoader}):
 *       where session bindings live (in memory for one gateway, Redis for many);
 *   <li>{@link io.affinityrouter.spi.ReplicaScorer}: an extra term in a replica's score;
 *   <li>{@link io.affinityrouter.spi.ReplicaFilter}: rules a replica out for a request;
 *   <li>{@link io.affinityrouter.spi.RoutingListener}: observes decisions, repins, wakes, failures;
 *   <li>{@link io.affinityrouter.spi.LoadExchange}: lets several gateways' routers see each other's
 *       queued work (in memory for one JVM, Redis for many);
 *   <li>{@link io.affinityrouter.spi.ReplicaDiscovery}: where a fleet view's replicas
 *       ({@link io.affinityrouter.spi.ReplicaEndpoint}s) come from: a fixed list, Kubernetes, a
 *       service registry;
 *   <li>{@link io.affinityrouter.spi.Tokenizer}: turns a chat or completion request into the
 *       token ids the engine computes, so the router hashes the blocks the engine caches.
 * </ul>
 *
 * <p>Scorers, filters and listeners are registered on the router's builder or discovered with
 * {@link java.util.ServiceLoader} ({@code META-INF/services/<interface name>}) when the builder's
 * {@code discoverPlugins()} is called. Null-marked, as the API.
 */
@NullMarked
package io.affinityrouter.spi;

import org.jspecify.annotations.NullMarked;
