/**
 * A runnable HTTP gateway that embeds the router: Jetty's server in (limits and timeouts against
 * hostile clients, OpenAI-style errors), the JDK's client out, metrics scraping into
 * {@link io.affinityrouter.Replica} snapshots, {@code selectAsync} routing, streaming pass-through,
 * lease accounting on every path, status mapping, {@code /v1/models}, Prometheus {@code /metrics},
 * {@code /health}, graceful shutdown; plus a local launcher
 * ({@link io.affinityrouter.examples.httpgateway.LocalFleet}) and a load driver
 * ({@link io.affinityrouter.examples.httpgateway.LoadDriver}).
 */
package io.affinityrouter.examples.httpgateway;
