/**
 * A Spring Cloud Gateway that routes LLM inference requests with affinity-router: the runnable
 * application; the parts are in {@code config} (properties, auto-configuration),
 * {@code loadbalancer} (the Spring Cloud LoadBalancer adapter), {@code request} (the gateway filter
 * and request reading), {@code replica} (metrics scraping) and {@code metrics} (Micrometer meters).
 */
@NullMarked
package io.affinityrouter.examples.gateway;

import org.jspecify.annotations.NullMarked;
