package io.affinityrouter.redis;

/**
 * Counts since a {@link RedisBindingStore} was built, for metrics and tests. Immutable snapshot.
 *
 * @param claims getOrClaim calls that created a binding (won the claim)
 * @param adopted getOrClaim calls answered by Redis with an existing binding
 * @param repinsApplied repins whose compare-and-set applied
 * @param repinsStale repins refused because another gateway had written a newer generation
 * @param corruptValues stored values that were not ours or not parseable (treated as absent and
 *     overwritten by a claim or repin, or reported absent by {@code get})
 * @param scriptReloads calls that met {@code NOSCRIPT} and were re-sent with {@code EVAL}
 * @param failures calls whose stage completed exceptionally (Redis down, timed out, rejected)
 * @param cacheHits getOrClaim calls answered from the local cache (no Redis command on the path)
 * @param cacheMisses getOrClaim calls that went to Redis while the local cache is enabled
 * @param cacheRefreshes asynchronous TTL refreshes issued for cached bindings
 * @param invalidationsReceived repin invalidations received from Redis pub/sub
 */
public record RedisBindingStoreStats(long claims, long adopted, long repinsApplied,
    long repinsStale, long corruptValues, long scriptReloads, long failures, long cacheHits,
    long cacheMisses, long cacheRefreshes, long invalidationsReceived) {}
