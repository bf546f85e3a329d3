package io.affinityrouter.spi;

import io.affinityrouter.RepinCause;
import io.affinityrouter.Replica;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;

/**
 * Observes the router: decisions, repins, wake requests and failures. Every method has an empty
 * default, so a listener overrides only what it needs.
 *
 * <p>Called synchronously on the thread that made the decision (for {@code selectAsync}, possibly a
 * binding store's I/O thread): implementations must be thread-safe, fast, and must not block. An
 * exception thrown by a listener is caught and ignored; it never reaches the router's caller.
 * The request passed in carries the prompt; listeners must not log or store its content.
 */
public interface RoutingListener {

  /**
   * A decision was made (routed or not).
   *
   * @param request the request
   * @param decision the decision
   * @param selectNanos how long {@code select} took, in nanoseconds of the router's ticker
   */
  default void onDecision(RoutingRequest request, RoutingDecision decision, long selectNanos) {}

  /** A session moved from one replica to another. */
  default void onRepin(BindingKey key, String fromReplicaId, String toReplicaId, RepinCause cause) {}

  /**
   * The gateway should wake the request's model on {@code replica} (e.g. vLLM's
   * {@code POST /wake_up}). Either the model is asleep on every replica that hosts it (the request
   * was not routed and is not held; the caller retries after the decision's {@code retryAfter}), or
   * the awake replicas are under pressure — the routed request's estimated queue reached the router's
   * wake threshold — and a sleeping replica can add capacity. Asked at most once per replica and
   * model within the router's unavailable retry-after.
   */
  default void onWakeRequested(Replica replica, String model) {}

  /** The binding store failed or timed out; the decision was degraded. */
  default void onStoreFailure(Throwable cause) {}

  /** A scorer or filter plugin threw or returned an invalid score. */
  default void onPluginFailure(String pluginName, Throwable cause) {}
}
