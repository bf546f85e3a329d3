package io.affinityrouter.spi;

import io.affinityrouter.Unstable;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Who may act on the fleet's models: of all the gateways sharing a lease, one holds it at a time,
 * and a holder that stops renewing loses it when its time to live runs out. Each holding carries a
 * <b>fencing token</b> that only grows: a gateway acts only while the store still names its token
 * current, so a holder that paused past its lease (and was taken over) does not act on stale plans.
 * The model lifecycle ({@code io.affinityrouter.core.lifecycle.ModelLifecycle}) acts only while it
 * holds one.
 *
 * <p>{@link #local()} is the lease of a single gateway (the in-memory default). The Redis one is
 * {@code io.affinityrouter.redis.RedisLifecycleLease}.
 *
 * <p>Implementations are thread-safe. No method throws for a store failure: the stage completes
 * exceptionally, and the caller treats that as not holding the lease.
 */
@Unstable
public interface LifecycleLease extends AutoCloseable {

  /**
   * Takes the lease for {@code holder} if no one holds it, or renews it if {@code holder} does,
   * for {@code ttl} from now.
   *
   * @return the fencing token of the holding, or empty when another holder has the lease
   */
  CompletionStage<OptionalLong> acquire(String holder, Duration ttl);

  /** Whether {@code holder}'s holding with {@code token} is still the current one. */
  CompletionStage<Boolean> isCurrent(String holder, long token);

  /** Gives the lease up if {@code holder} holds it with {@code token}; otherwise does nothing. */
  CompletionStage<Void> release(String holder, long token);

  /** Releases nothing; closes what the lease owns (a connection), if anything. */
  @Override
  default void close() {}

  /** The lease of a lone gateway: always held by whoever asks, with token 1. */
  static LifecycleLease local() {
    return new LifecycleLease() {
      @Override
      public CompletionStage<OptionalLong> acquire(String holder, Duration ttl) {
        return CompletableFuture.completedFuture(OptionalLong.of(1));
      }

      @Override
      public CompletionStage<Boolean> isCurrent(String holder, long token) {
        return CompletableFuture.completedFuture(token == 1);
      }

      @Override
      public CompletionStage<Void> release(String holder, long token) {
        return CompletableFuture.completedFuture(null);
      }

      @Override
      public String toString() {
        return "LifecycleLease.local()";
      }
    };
  }
}
