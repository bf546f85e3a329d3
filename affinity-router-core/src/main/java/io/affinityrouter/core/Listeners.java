package io.affinityrouter.core;

import io.affinityrouter.Replica;
import io.affinityrouter.RepinCause;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.RoutingListener;
import java.util.List;
import java.util.function.Consumer;

/**
 * The router's listeners, each called in turn; a listener that throws never breaks routing, and
 * its failure is logged (at most every 10 s).
 */
final class Listeners {
  private final RateLimitedLog log = new RateLimitedLog(Listeners.class, 10); // per router
  private final RoutingListener[] listeners;

  Listeners(List<RoutingListener> listeners) {
    this.listeners = listeners.toArray(new RoutingListener[0]);
  }

  boolean isEmpty() {
    return listeners.length == 0;
  }

  void decision(RoutingRequest request, RoutingDecision decision, long nanos) {
    for (RoutingListener l : listeners) { // every decision: a loop, not a lambda per call
      try {
        l.onDecision(request, decision, nanos);
      } catch (RuntimeException e) {
        log.warn("routing listener " + l.getClass().getName()
            + " threw; routing goes on (logged at most every 10 s)", e);
      }
    }
  }

  void repin(BindingKey key, String from, String to, RepinCause cause) {
    each(l -> l.onRepin(key, from, to, cause));
  }

  void storeFailure(Throwable error) {
    each(l -> l.onStoreFailure(error));
  }

  void pluginFailure(String plugin, Throwable error) {
    each(l -> l.onPluginFailure(plugin, error));
  }

  void wakeRequested(Replica replica, String model) {
    each(l -> l.onWakeRequested(replica, model));
  }

  private void each(Consumer<RoutingListener> call) {
    for (RoutingListener l : listeners) {
      try {
        call.accept(l);
      } catch (RuntimeException e) {
        log.warn("routing listener " + l.getClass().getName()
            + " threw; routing goes on (logged at most every 10 s)", e);
      }
    }
  }
}
