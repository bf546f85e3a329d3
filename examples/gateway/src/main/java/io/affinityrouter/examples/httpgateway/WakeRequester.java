package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.Replica;
import io.affinityrouter.spi.RoutingListener;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Wakes a sleeping model when the router asks ({@link RoutingListener#onWakeRequested}): sends
 * vLLM's {@code POST /wake_up} to the replica, asynchronously, at most one call in flight per
 * replica. The next scrape then shows the model awake and the router sends it traffic; meanwhile the
 * caller got {@code 503} with {@code Retry-After}.
 *
 * <p>Thread-safe and non-blocking, as a listener must be.
 */
final class WakeRequester implements RoutingListener {
  private final HttpClient client;
  private final Set<String> waking = ConcurrentHashMap.newKeySet();
  private final LongAdder sent = new LongAdder();

  WakeRequester(HttpClient client) {
    this.client = client;
  }

  /** Wake-up calls sent so far. */
  long sent() {
    return sent.sum();
  }

  @Override
  public void onWakeRequested(Replica replica, String model) {
    if (!waking.add(replica.id())) {
      return;
    }
    sent.increment();
    HttpRequest request = HttpRequest.newBuilder(URI.create(replica.address() + "/wake_up"))
        .timeout(Duration.ofSeconds(30))
        .POST(HttpRequest.BodyPublishers.noBody())
        .build();
    client.sendAsync(request, HttpResponse.BodyHandlers.discarding())
        .whenComplete((response, error) -> waking.remove(replica.id()));
  }
}
