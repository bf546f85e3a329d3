package io.affinityrouter.examples.gateway;

import io.affinityrouter.examples.gateway.loadbalancer.AffinityLoadBalancerConfiguration;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClients;

/**
 * A Spring Cloud Gateway in front of a vLLM fleet, routing with affinity-router: the
 * {@code lb://vllm} route in {@code application.yml} goes through
 * {@link io.affinityrouter.examples.gateway.loadbalancer.AffinityLoadBalancer}, and
 * {@code /actuator/prometheus} shows the router's meters. Run it with
 * {@code mvn -pl examples/spring-cloud-gateway exec:java} (see the module README).
 */
@SpringBootApplication
@LoadBalancerClients(defaultConfiguration = AffinityLoadBalancerConfiguration.class)
public class GatewayApplication {

  /** Spring creates it. */
  public GatewayApplication() {}

  /** Starts the gateway. */
  public static void main(String[] args) {
    SpringApplication.run(GatewayApplication.class, args);
  }
}
