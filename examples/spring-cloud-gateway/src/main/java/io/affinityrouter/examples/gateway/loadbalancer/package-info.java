/**
 * The Spring Cloud LoadBalancer adapter: the load balancer, its responses and the lifecycle that
 * closes leases.
 */
@NullMarked
package io.affinityrouter.examples.gateway.loadbalancer;

import org.jspecify.annotations.NullMarked;
