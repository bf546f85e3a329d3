package io.affinityrouter.examples.gateway.loadbalancer;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.engine.FleetView;
import io.affinityrouter.examples.gateway.replica.ServiceInstanceDiscovery;
import io.affinityrouter.examples.gateway.request.RoutingRequestFactory;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.loadbalancer.core.NoopServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.web.server.ResponseStatusException;
import reactor.core.publisher.Mono;

/**
 * A Spring Cloud LoadBalancer that chooses instances with affinity-router: sessions stay on the
 * replica holding their KV cache, prompts go where their prefix is cached, load is counted in
 * tokens.
 *
 * <p>For each request it takes the service's current instances (telling the
 * {@link ServiceInstanceDiscovery} of them), takes their {@link Replica}s from the fleet view's last
 * snapshot ({@link FleetView#replicas()}: scraped load, models, health), takes the {@link RoutingRequest} that
 * {@link io.affinityrouter.examples.gateway.request.InferenceRequestFilter} built from the headers
 * and cached body (exchange attribute {@link #ROUTING_REQUEST_ATTR}; without it, one with the
 * headers' session and tenant and an empty prompt), and calls {@link Router#selectAsync} — never
 * blocking the event loop. The decision is put in the exchange attributes under
 * {@link #DECISION_ATTR} and answered as a {@link RoutedResponse} (its lease is closed by
 * {@link io.affinityrouter.examples.gateway.request.LeaseClosingFilter} or
 * {@link LeaseReleasingLifecycle}) or a {@link NotRoutedResponse} (no instance; never a random one).
 *
 * <p>If the caller cancels before the decision is delivered, the decision's lease is closed here.
 * Thread-safe: one instance serves a service for all threads.
 */
public final class AffinityLoadBalancer implements ReactorServiceInstanceLoadBalancer {
  /** Exchange attribute holding the {@link RoutingRequest} to route (prompt already hashed). */
  public static final String ROUTING_REQUEST_ATTR =
      AffinityLoadBalancer.class.getName() + ".routingRequest";
  /** Exchange attribute where the {@link RoutingDecision} is put. */
  public static final String DECISION_ATTR = AffinityLoadBalancer.class.getName() + ".decision";
  /**
   * Exchange attribute: {@code true} when something around the exchange closes the lease as the
   * exchange ends ({@link io.affinityrouter.examples.gateway.request.LeaseClosingFilter}), so
   * {@link LeaseReleasingLifecycle} must not close it on {@code SUCCESS}.
   */
  public static final String LEASE_ENDS_WITH_EXCHANGE_ATTR =
      AffinityLoadBalancer.class.getName() + ".leaseEndsWithExchange";

  private final String serviceId;
  private final ObjectProvider<ServiceInstanceListSupplier> suppliers;
  private final Router router;
  private final FleetView fleet;
  private final ServiceInstanceDiscovery discovery;
  private final RoutingRequestFactory requests;

  /**
   * Creates a load balancer for one service.
   *
   * @param serviceId the service's id (for messages)
   * @param suppliers where the service's instances come from (discovery, with Spring Cloud's
   *     caching)
   * @param router the router, shared by every service of the gateway
   * @param fleet keeps replicas' load and health fresh
   * @param discovery hears of the instances the service has
   * @param requests builds requests for callers that did not put one in the attributes
   */
  public AffinityLoadBalancer(String serviceId,
      ObjectProvider<ServiceInstanceListSupplier> suppliers, Router router, FleetView fleet,
      ServiceInstanceDiscovery discovery, RoutingRequestFactory requests) {
    this.serviceId = Objects.requireNonNull(serviceId, "serviceId");
    this.suppliers = Objects.requireNonNull(suppliers, "suppliers");
    this.router = Objects.requireNonNull(router, "router");
    this.fleet = Objects.requireNonNull(fleet, "fleet");
    this.discovery = Objects.requireNonNull(discovery, "discovery");
    this.requests = Objects.requireNonNull(requests, "requests");
  }

  /**
   * Chooses an instance for the request.
   *
   * @return a {@link RoutedResponse} or a {@link NotRoutedResponse}; an error
   *     ({@link ResponseStatusException} 400) only when the request has a session id longer than
   *     256 bytes and no filter checked it before
   */
  @Override
  public Mono<Response<ServiceInstance>> choose(Request request) {
    ServiceInstanceListSupplier supplier =
        suppliers.getIfAvailable(NoopServiceInstanceListSupplier::new);
    return supplier.get(request).next().flatMap(instances -> choose(request, instances));
  }

  private Mono<Response<ServiceInstance>> choose(Request<?> request,
      List<ServiceInstance> instances) {
    RequestData data = requestData(request);
    @Nullable Map<String, Object> attributes = data == null ? null : data.getAttributes();
    RoutingRequest routingRequest;
    try {
      routingRequest = routingRequest(data, attributes);
    } catch (IllegalArgumentException e) {
      return Mono.error(new ResponseStatusException(HttpStatus.BAD_REQUEST, e.getMessage(), e));
    }
    discovery.listed(serviceId, instances);
    Map<String, ServiceInstance> byId = new HashMap<>(instances.size() * 2);
    for (ServiceInstance instance : instances) {
      byId.putIfAbsent(ServiceInstanceDiscovery.replicaId(instance), instance);
    }
    List<Replica> replicas = ofService(fleet.replicas(), byId);
    return Mono.create(sink -> {
      // Whoever flips this first owns the outcome: delivery, or the cancel (then the lease is
      // closed here as soon as the decision exists).
      AtomicBoolean settled = new AtomicBoolean();
      CompletableFuture<RoutingDecision> selected =
          router.selectAsync(routingRequest, replicas).toCompletableFuture();
      sink.onCancel(() -> {
        settled.set(true);
        selected.cancel(false); // a held request whose client left leaves the queue
      });
      selected.whenComplete((decision, error) -> {
        if (selected.isCancelled()) {
          return;
        }
        if (error != null) {
          if (settled.compareAndSet(false, true)) {
            sink.error(error);
          }
          return;
        }
        if (!settled.compareAndSet(false, true)) {
          if (decision.isRouted()) {
            decision.lease().close();
          }
          return;
        }
        if (attributes != null) {
          attributes.put(DECISION_ATTR, decision);
        }
        sink.success(decision.isRouted()
            ? new RoutedResponse(byId.get(decision.replica().id()), decision)
            : new NotRoutedResponse(decision));
      });
    });
  }

  /** The fleet's replicas among the service's instances: the snapshot itself when they agree. */
  private static List<Replica> ofService(List<Replica> all, Map<String, ServiceInstance> byId) {
    int matching = 0;
    for (Replica r : all) {
      if (byId.containsKey(r.id())) {
        matching++;
      }
    }
    if (matching == all.size()) {
      return all;
    }
    List<Replica> out = new java.util.ArrayList<>(matching);
    for (Replica r : all) {
      if (byId.containsKey(r.id())) {
        out.add(r);
      }
    }
    return out;
  }

  private RoutingRequest routingRequest(@Nullable RequestData data,
      @Nullable Map<String, Object> attributes) {
    Object prepared = attributes == null ? null : attributes.get(ROUTING_REQUEST_ATTR);
    if (prepared instanceof RoutingRequest r) {
      return r;
    }
    return requests.fromHeaders(data == null ? HttpHeaders.EMPTY : data.getHeaders());
  }

  private static @Nullable RequestData requestData(Request<?> request) {
    Object context = request.getContext();
    return context instanceof RequestDataContext c ? c.getClientRequest() : null;
  }

  @Override
  public String toString() {
    return "AffinityLoadBalancer{" + serviceId + '}';
  }
}
