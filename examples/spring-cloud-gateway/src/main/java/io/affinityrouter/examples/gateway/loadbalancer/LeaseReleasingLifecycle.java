package io.affinityrouter.examples.gateway.loadbalancer;

import io.affinityrouter.core.engine.FleetView;
import java.net.ConnectException;
import java.util.Map;
import java.util.Objects;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.ResponseData;

/**
 * Closes the {@link io.affinityrouter.RequestLease} of a {@link RoutedResponse} when the load
 * balancer's caller reports the request complete: on {@code FAILED} always, on {@code SUCCESS}
 * unless the exchange says its lease ends with it
 * ({@link AffinityLoadBalancer#LEASE_ENDS_WITH_EXCHANGE_ATTR}). Spring Cloud Gateway reports
 * {@code SUCCESS} when the upstream response headers arrive, before a streamed body is relayed, and
 * never reports a client's cancel:
 * {@link io.affinityrouter.examples.gateway.request.LeaseClosingFilter} ends leases there. Other
 * callers (e.g. a load-balanced {@code WebClient}) rely on this lifecycle alone.
 *
 * <p>A forward that could not connect is reported to the fleet view
 * ({@link FleetView#reportFailure}), so a backend that went away turns unhealthy at once.
 * Closing twice is harmless (leases release once). Thread-safe and stateless.
 */
public final class LeaseReleasingLifecycle
    implements LoadBalancerLifecycle<RequestDataContext, ResponseData, ServiceInstance> {
  private final FleetView fleet;

  /** Creates the lifecycle; {@code fleet} hears of refused connections. */
  public LeaseReleasingLifecycle(FleetView fleet) {
    this.fleet = Objects.requireNonNull(fleet, "fleet");
  }

  /** Supports the gateway's request and response types. */
  @Override
  public boolean supports(Class requestContextClass, Class responseClass, Class serverTypeClass) {
    return RequestDataContext.class.isAssignableFrom(requestContextClass)
        && ResponseData.class.isAssignableFrom(responseClass)
        && ServiceInstance.class.isAssignableFrom(serverTypeClass);
  }

  /** Does nothing: the lease is opened by the decision itself. */
  @Override
  public void onStart(Request<RequestDataContext> request) {}

  /** Does nothing. */
  @Override
  public void onStartRequest(Request<RequestDataContext> request,
      Response<ServiceInstance> lbResponse) {}

  /** Closes the lease of a routed response as described above; records refused connections. */
  @Override
  public void onComplete(
      CompletionContext<ResponseData, ServiceInstance, RequestDataContext> completionContext) {
    if (!(completionContext.getLoadBalancerResponse() instanceof RoutedResponse routed)) {
      return;
    }
    if (completionContext.status() == CompletionContext.Status.FAILED
        && isConnectFailure(completionContext.getThrowable())) {
      fleet.reportFailure(routed.decision().replica().id(), completionContext.getThrowable());
    }
    if (completionContext.status() == CompletionContext.Status.SUCCESS
        && endsWithExchange(completionContext.getClientResponse())) {
      return;
    }
    routed.decision().lease().close();
  }

  private static boolean endsWithExchange(ResponseData response) {
    RequestData request = response == null ? null : response.getRequestData();
    Map<String, Object> attributes = request == null ? null : request.getAttributes();
    return attributes != null
        && Boolean.TRUE.equals(attributes.get(AffinityLoadBalancer.LEASE_ENDS_WITH_EXCHANGE_ATTR));
  }

  private static boolean isConnectFailure(Throwable error) {
    for (Throwable t = error; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof ConnectException) {
        return true;
      }
    }
    return false;
  }
}
