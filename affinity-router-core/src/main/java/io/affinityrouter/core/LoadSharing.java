package io.affinityrouter.core;

import io.affinityrouter.spi.LoadExchange;
import io.affinityrouter.spi.LoadExchange.Share;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * This router's side of a {@link LoadExchange}: publishes its queued prefill and session turn rate
 * per replica and takes in the other routers', at most once per interval. One decision thread wins the slot, the others
 * go on. A failing exchange keeps the last view (it drains with time) and is reported as a plugin
 * failure. Thread-safe.
 */
final class LoadSharing {
  private final LoadExchange exchange;
  private final String routerId;
  private final long intervalMillis;
  private final LoadTracker tracker;
  private final Listeners listeners;
  private final AtomicLong nextMillis = new AtomicLong(Long.MIN_VALUE);

  LoadSharing(LoadExchange exchange, String routerId, long intervalMillis, LoadTracker tracker,
      Listeners listeners) {
    this.exchange = exchange;
    this.routerId = routerId;
    this.intervalMillis = intervalMillis;
    this.tracker = tracker;
    this.listeners = listeners;
  }

  /** Exchanges if the interval has elapsed and no other thread took this slot. */
  void maybeExchange(long now) {
    long next = nextMillis.get();
    if (now < next || !nextMillis.compareAndSet(next, now + intervalMillis)) {
      return;
    }
    double window = tracker.turnWindowSeconds();
    Map<String, Share> mine = new HashMap<>();
    for (ReplicaState state : tracker.states()) {
      double pending = state.pendingPrefillSeconds(now);
      double turns = window > 0 ? state.turnsPerSecond(now, window) : 0;
      if (pending > 0 || turns > 0) {
        mine.put(state.id(), new Share(pending, turns));
      }
    }
    Map<String, Share> others;
    try {
      others = Objects.requireNonNull(exchange.share(routerId, mine, now), "others");
    } catch (RuntimeException e) {
      listeners.pluginFailure("loadExchange", e);
      return;
    }
    for (ReplicaState state : tracker.states()) {
      Share v = others.get(state.id());
      state.peerQueue(v == null ? 0 : v.queuedSeconds(), v == null ? 0 : v.sessionTurnsPerSecond(),
          now);
    }
  }
}
