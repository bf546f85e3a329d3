package io.affinityrouter.examples.gateway.loadbalancer;

import io.affinityrouter.examples.gateway.replica.ReplicaScraper;
import java.net.ConnectException;
import java.util.Objects;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.CompletionContext;
import org.springframework.cloud.client.loadbalancer.LoadBalancerLifecycle;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.ResponseData;

/**
 * Closes the {@link io.affinityrouter.RequestLease} of a {@link RoutedResponse} when Spring Cloud
 * Gateway reports the request complete ({@code SUCCESS} after the response body was written,
 * {@code FAILED} on an error). A forward that could not connect also counts as a failed scrape of
 * the replica ({@link ReplicaScraper#connectFailed}), so a backend that went away turns unhealthy
 * quickly.
 *
 * <p>Spring Cloud Gateway does not call {@code onComplete} when the client cancels;
 * {@link io.affinityrouter.examples.gateway.request.InferenceRequestFilter} closes the lease then.
 * Closing twice is harmless (leases release once). Thread-safe and stateless.
 */
public final class LeaseReleasingLifecycle
    implements LoadBalancerLifecycle<RequestDataContext, ResponseData, ServiceInstance> {
  private final ReplicaScraper scraper;

  /** Creates the lifecycle; {@code scraper} hears of refused connections. */
  public LeaseReleasingLifecycle(ReplicaScraper scraper) {
    this.scraper = Objects.requireNonNull(scraper, "scraper");
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

  /** Closes the lease of a routed response; records refused connections. */
  @Override
  public void onComplete(
      CompletionContext<ResponseData, ServiceInstance, RequestDataContext> completionContext) {
    if (!(completionContext.getLoadBalancerResponse() instanceof RoutedResponse routed)) {
      return;
    }
    if (completionContext.status() == CompletionContext.Status.FAILED
        && isConnectFailure(completionContext.getThrowable())) {
      scraper.connectFailed(routed.decision().replica().id());
    }
    routed.decision().lease().close();
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
