/**
 * A {@link io.affinityrouter.spi.BindingStore} on Redis (standalone, Sentinel, Cluster, TLS, ACL)
 * through Lettuce's asynchronous API: {@link io.affinityrouter.redis.RedisBindingStore}, built with
 * {@link io.affinityrouter.redis.RedisBindingStore#builder()} or found through
 * {@link io.affinityrouter.redis.RedisBindingStoreProvider} (name {@code "redis"}).
 *
 * <p>Null-marked: nothing here accepts or returns {@code null} unless annotated.
 */
@NullMarked
package io.affinityrouter.redis;

import org.jspecify.annotations.NullMarked;
