package io.affinityrouter.redis;

import java.util.concurrent.atomic.LongAdder;

/** The store's running counts, read through {@link RedisBindingStoreStats}. Thread-safe. */
final class StoreCounters {
  final LongAdder claims = new LongAdder();
  final LongAdder adopted = new LongAdder();
  final LongAdder repinsApplied = new LongAdder();
  final LongAdder repinsStale = new LongAdder();
  final LongAdder corruptValues = new LongAdder();
  final LongAdder scriptReloads = new LongAdder();
  final LongAdder failures = new LongAdder();
  final LongAdder cacheHits = new LongAdder();
  final LongAdder cacheMisses = new LongAdder();
  final LongAdder cacheRefreshes = new LongAdder();
  final LongAdder invalidationsReceived = new LongAdder();

  RedisBindingStoreStats snapshot() {
    return new RedisBindingStoreStats(claims.sum(), adopted.sum(), repinsApplied.sum(),
        repinsStale.sum(), corruptValues.sum(), scriptReloads.sum(), failures.sum(),
        cacheHits.sum(), cacheMisses.sum(), cacheRefreshes.sum(), invalidationsReceived.sum());
  }
}
