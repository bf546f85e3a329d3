package io.affinityrouter.examples.gateway.loadbalancer;

import io.affinityrouter.Router;
import io.affinityrouter.core.engine.FleetView;
import io.affinityrouter.examples.gateway.replica.ServiceInstanceDiscovery;
import io.affinityrouter.examples.gateway.request.RoutingRequestFactory;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * The per-service load-balancer configuration that puts affinity-router in charge of a service:
 *
 * <pre>{@code
 * @LoadBalancerClient(name = "vllm", configuration = AffinityLoadBalancerConfiguration.class)
 * // or, for every lb:// service of the gateway:
 * @LoadBalancerClients(defaultConfiguration = AffinityLoadBalancerConfiguration.class)
 * }</pre>
 *
 * <p>Deliberately not a {@code @Configuration}: Spring Cloud registers it in each service's child
 * context, and component scanning must not pick it up into the main one. The service's instances
 * still come from Spring Cloud's default {@link ServiceInstanceListSupplier} (discovery client with
 * caching).
 */
public class AffinityLoadBalancerConfiguration {

  /** Creates the configuration (Spring Cloud does, per service). */
  public AffinityLoadBalancerConfiguration() {}

  /** The service's load balancer. */
  @Bean
  public ReactorServiceInstanceLoadBalancer affinityLoadBalancer(Environment environment,
      LoadBalancerClientFactory factory, Router router, FleetView fleet,
      ServiceInstanceDiscovery discovery, RoutingRequestFactory requests) {
    String serviceId = environment.getRequiredProperty(LoadBalancerClientFactory.PROPERTY_NAME);
    return new AffinityLoadBalancer(serviceId,
        factory.getLazyProvider(serviceId, ServiceInstanceListSupplier.class), router, fleet,
        discovery, requests);
  }

  /** Closes leases when the gateway completes a request. */
  @Bean
  public LeaseReleasingLifecycle leaseReleasingLifecycle(FleetView fleet) {
    return new LeaseReleasingLifecycle(fleet);
  }
}
