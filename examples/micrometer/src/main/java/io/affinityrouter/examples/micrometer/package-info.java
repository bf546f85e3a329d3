/**
 * Micrometer meters for a gateway that embeds the router: its decisions
 * ({@link io.affinityrouter.examples.micrometer.MicrometerRoutingListener}), its binding store's
 * latency ({@link io.affinityrouter.examples.micrometer.TimedBindingStore}) and its proxying
 * ({@link io.affinityrouter.examples.micrometer.ProxyMeters}).
 */
@NullMarked
package io.affinityrouter.examples.micrometer;

import org.jspecify.annotations.NullMarked;
