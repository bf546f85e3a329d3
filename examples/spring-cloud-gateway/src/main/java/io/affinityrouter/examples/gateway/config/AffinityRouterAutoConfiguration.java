package io.affinityrouter.examples.gateway.config;

import io.affinityrouter.Router;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.examples.gateway.metrics.MicrometerRoutingListener;
import io.affinityrouter.examples.gateway.replica.ReplicaScraper;
import io.affinityrouter.examples.gateway.request.InferenceRequestFilter;
import io.affinityrouter.examples.gateway.request.LeaseClosingFilter;
import io.affinityrouter.examples.gateway.request.RoutingRequestFactory;
import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.RoutingListener;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.InstantSource;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Spring Boot auto-configuration of affinity-router for Spring Cloud Gateway: the {@link Router}
 * (from the {@code affinity-router.*} properties, every {@link RoutingListener} bean, and the
 * binding store: a {@link BindingStore} bean if there is one, else the Redis store of
 * {@code affinity-router.redis-uri}, else the in-memory store), the Micrometer listener,
 * the replica scraper and the gateway filters. Services are put in the router's charge with
 * {@link io.affinityrouter.examples.gateway.loadbalancer.AffinityLoadBalancerConfiguration}.
 *
 * <p>Each bean backs off when the application defines its own of the same type.
 */
@AutoConfiguration
@EnableConfigurationProperties(AffinityRouterProperties.class)
public class AffinityRouterAutoConfiguration {

  /** Creates the configuration (Spring Boot does). */
  public AffinityRouterAutoConfiguration() {}

  /**
   * The router; closed with the context (with the Redis store it opened, if any).
   *
   * @throws IllegalArgumentException if both a {@link BindingStore} bean and
   *     {@code affinity-router.redis-uri} are given, or a property is out of range
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public Router affinityRouter(AffinityRouterProperties properties,
      ObjectProvider<RoutingListener> listeners, ObjectProvider<BindingStore> stores) {
    AffinityRouter.Builder builder = properties.applyTo(AffinityRouter.builder());
    BindingStore store = stores.getIfAvailable();
    if (store != null && properties.redisUri() != null) {
      throw new IllegalArgumentException("affinity-router.redis-uri: set, and a BindingStore bean "
          + store.getClass().getName() + " exists (expected: one of them)");
    }
    if (store != null) {
      builder.bindingStore(store);
    } else if (properties.redisUri() != null) {
      // the "redis" provider of affinity-router-redis-binding; the router owns and closes it
      builder.bindingStore("redis", Map.of("uri", properties.redisUri()));
    }
    listeners.orderedStream().forEach(builder::addListener);
    return builder.build();
  }

  /** The Micrometer meters of the router's decisions. */
  @Bean
  @ConditionalOnClass(MeterRegistry.class)
  @ConditionalOnMissingBean
  public MicrometerRoutingListener micrometerRoutingListener(MeterRegistry registry) {
    return new MicrometerRoutingListener(registry);
  }

  /** Reads sessions, tenants, models and prompts from requests. */
  @Bean
  @ConditionalOnMissingBean
  public RoutingRequestFactory routingRequestFactory(AffinityRouterProperties properties) {
    return new RoutingRequestFactory(properties.sessionHeader(), properties.tenantHeader());
  }

  /** Scrapes the replicas' {@code /metrics}; started and stopped with the context. */
  @Bean(initMethod = "start", destroyMethod = "close")
  @ConditionalOnMissingBean
  public ReplicaScraper replicaScraper(AffinityRouterProperties properties,
      ObjectProvider<WebClient.Builder> webClient) {
    return new ReplicaScraper(webClient.getIfAvailable(WebClient::builder), properties.scrape(),
        InstantSource.system());
  }

  /** Ends leases when exchanges end (after a streamed body, on error, on cancel). */
  @Bean
  @ConditionalOnMissingBean
  public LeaseClosingFilter leaseClosingFilter() {
    return new LeaseClosingFilter();
  }

  /** Prepares routing requests and maps not-routed decisions to 429/503. */
  @Bean
  @ConditionalOnMissingBean
  public InferenceRequestFilter inferenceRequestFilter(Router router,
      RoutingRequestFactory requests) {
    return new InferenceRequestFilter(router, requests);
  }
}
