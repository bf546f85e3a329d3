package io.affinityrouter.examples.gateway.config;

import io.affinityrouter.Router;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.core.engine.FleetView;
import io.affinityrouter.core.tokenizer.InProcessTokenizer;
import io.affinityrouter.examples.gateway.replica.ServiceInstanceDiscovery;
import io.affinityrouter.examples.micrometer.MicrometerRoutingListener;
import io.affinityrouter.examples.gateway.request.InferenceRequestFilter;
import io.affinityrouter.examples.gateway.request.LeaseClosingFilter;
import io.affinityrouter.examples.gateway.request.RoutingRequestFactory;
import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.ReplicaDiscovery;
import io.affinityrouter.spi.RoutingListener;
import io.affinityrouter.spi.Tokenizer;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.util.ClassUtils;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Spring Boot auto-configuration of affinity-router for Spring Cloud Gateway: the {@link Router}
 * (from the {@code affinity-router.*} properties, every {@link RoutingListener} bean, and the
 * binding store: a {@link BindingStore} bean if there is one, else the Redis store of
 * {@code affinity-router.redis-uri}, else the in-memory store), the Micrometer listener,
 * the fleet view (the core's {@link FleetView}: every replica's {@code /metrics} scraped, health,
 * and {@code POST /wake_up} when the router asks to wake a sleeping vLLM model), the replicas'
 * discovery and the gateway filters. Services are put in the router's charge with
 * {@link io.affinityrouter.examples.gateway.loadbalancer.AffinityLoadBalancerConfiguration}.
 *
 * <p>Each bean backs off when the application defines its own of the same type.
 */
@AutoConfiguration
@EnableConfigurationProperties(AffinityRouterProperties.class)
public class AffinityRouterAutoConfiguration {

  private static final System.Logger LOG =
      System.getLogger(AffinityRouterAutoConfiguration.class.getName());

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
      ObjectProvider<RoutingListener> listeners, ObjectProvider<BindingStore> stores,
      ObjectProvider<FleetView> fleet) {
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
    fleet.ifAvailable(f -> builder.addListener(f.wakeListener()));
    Router router = builder.build();
    // a scrape that shows room offers the held requests again
    fleet.ifAvailable(f -> f.addSnapshotListener(router::refresh));
    // an instance the discovery client drops is forgotten at once, its index entries with it
    fleet.ifAvailable(f -> f.addRemovalListener(router::retire));
    return router;
  }

  /**
   * The Micrometer meters of the router's decisions: a nested configuration, as
   * {@code @ConditionalOnClass}'s javadoc prescribes, so that nothing of Micrometer is loaded
   * without it.
   */
  @Configuration(proxyBeanMethods = false)
  @ConditionalOnClass(MeterRegistry.class)
  static class MicrometerConfiguration {
    @Bean
    @ConditionalOnMissingBean
    MicrometerRoutingListener micrometerRoutingListener(MeterRegistry registry) {
      return new MicrometerRoutingListener(registry);
    }
  }

  /** Reads sessions, tenants, models and prompts from requests. */
  @Bean
  @ConditionalOnMissingBean
  public RoutingRequestFactory routingRequestFactory(AffinityRouterProperties properties) {
    return new RoutingRequestFactory(properties.sessionHeader(), properties.tenantHeader());
  }

  /**
   * The replicas: the instances the load balancers are given, and those of
   * {@code affinity-router.scrape.services} asked of the discovery client.
   */
  @Bean
  @ConditionalOnMissingBean
  public ServiceInstanceDiscovery serviceInstanceDiscovery(AffinityRouterProperties properties,
      ObjectProvider<DiscoveryClient> discoveryClient) {
    return new ServiceInstanceDiscovery(discoveryClient.getIfAvailable(),
        properties.scrape().services());
  }

  /**
   * Scrapes the replicas the {@link ServiceInstanceDiscovery} names (another
   * {@link ReplicaDiscovery}, e.g. Kubernetes EndpointSlices, takes a {@link FleetView} bean of
   * the application's own); started and closed with the context.
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  public FleetView affinityFleetView(AffinityRouterProperties properties,
      ServiceInstanceDiscovery discovery) {
    AffinityRouterProperties.Scrape scrape = properties.scrape();
    return FleetView.builder().discovery(discovery)
        .scrapeInterval(scrape.interval())
        .scrapeTimeout(scrape.timeout())
        .metricsPath(scrape.path())
        .failuresToUnhealthy(scrape.unhealthyAfterFailures())
        .build();
  }

  /** Ends leases when exchanges end (after a streamed body, on error, on cancel). */
  @Bean
  @ConditionalOnMissingBean
  public LeaseClosingFilter leaseClosingFilter() {
    return new LeaseClosingFilter();
  }

  /**
   * Starts the fleet view once the context is built, first feeding the router's index the KV
   * events of the replicas that publish them ({@code affinity-router.kv-events}, with JeroMQ and
   * msgpack on the class path); its bean closes it.
   */
  @Bean
  public SmartLifecycle affinityFleetViewLifecycle(AffinityRouterProperties properties,
      FleetView fleet, Router router) {
    return new SmartLifecycle() {
      private volatile boolean running;

      @Override
      public void start() {
        if (properties.kvEvents() && ClassUtils.isPresent("org.zeromq.ZMQ", null)
            && ClassUtils.isPresent("org.msgpack.core.MessagePack", null)) {
          try {
            fleet.kvEvents(router.cacheEvents());
          } catch (IllegalStateException e) {
            LOG.log(System.Logger.Level.WARNING, "KV events not subscribed: the fleet view was "
                + "started, or given a sink, before the context: " + e.getMessage());
          }
        }
        fleet.start();
        running = true;
      }

      @Override
      public void stop() {
        running = false;
      }

      @Override
      public boolean isRunning() {
        return running;
      }
    };
  }

  /**
   * Prepares routing requests and maps not-routed decisions to 429/503. Prompts are routed on the
   * engine's token ids with a {@link Tokenizer} bean, else with an {@link InProcessTokenizer} of
   * {@code affinity-router.tokenizer-models} when set (closed with the filter), else on their text.
   */
  @Bean
  @ConditionalOnMissingBean
  public InferenceRequestFilter inferenceRequestFilter(AffinityRouterProperties properties,
      Router router, RoutingRequestFactory requests, ObjectProvider<Tokenizer> tokenizer) {
    Tokenizer t = tokenizer.getIfAvailable();
    if (t != null || properties.tokenizerModels().isEmpty()) {
      return new InferenceRequestFilter(router, requests, t);
    }
    InProcessTokenizer.Builder b = InProcessTokenizer.builder();
    properties.tokenizerModels().forEach(b::model);
    return new InferenceRequestFilter(router, requests, b.build(), true);
  }
}
