/**
 * A runnable HTTP gateway that embeds the router: plain JDK HTTP in and out, metrics scraping into
 * {@link io.affinityrouter.Replica} snapshots, {@code selectAsync} routing, streaming pass-through,
 * lease accounting, status mapping, graceful shutdown; plus a local launcher
 * ({@link io.affinityrouter.examples.httpgateway.LocalFleet}) and a load driver
 * ({@link io.affinityrouter.examples.httpgateway.LoadDriver}).
 */
package io.affinityrouter.examples.httpgateway;
