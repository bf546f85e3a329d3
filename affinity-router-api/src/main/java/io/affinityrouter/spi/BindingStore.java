package io.affinityrouter.spi;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Where session bindings (session key → replica, generation, expiry) live, shared by every gateway
 * that routes the same fleet.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li><b>Atomicity.</b> {@link #getOrClaim} and {@link #repin} are each atomic per key: of racing
 *       calls on one key, exactly one claim creates the binding and every other call returns it;
 *       a repin applies only if the stored generation equals the expected one.
 *   <li><b>Generations</b> strictly increase per key across all writes, including writes after the
 *       previous binding expired (implementations draw them from a monotonic source: a counter, the
 *       server's clock). A binding's generation is never {@code 0}.
 *   <li><b>Sliding TTL.</b> {@link #getOrClaim} and a successful {@link #repin} (re)set the key's
 *       time to live to {@code ttl} in the same operation: a refresh costs no extra round trip. A
 *       binding not touched for {@code ttl} disappears.
 *   <li><b>One round trip.</b> Each call is at most one round trip to a remote store; the router calls
 *       {@code getOrClaim} once per routed request with a session, and {@code repin} only when the
 *       session must move.
 *   <li><b>Threads and blocking.</b> Implementations are thread-safe. Methods must not block the
 *       caller: remote stores return a stage completed by their I/O threads. Stages should complete
 *       promptly; the router bounds its wait with its own timeout and treats a late answer as a
 *       failure for that decision.
 *   <li><b>Failures.</b> A stage completed exceptionally means the store could not answer (down,
 *       timed out, overloaded). The router then routes in degraded mode and reconciles later; it never
 *       passes the exception to its caller. Methods throw only for programmer errors (null
 *       arguments).
 *   <li><b>Session context.</b> The overloads that take a {@link SessionContext} store it with the
 *       binding in the same operation (replacing the one before) and return the one before as
 *       {@link Binding#context()}, unless its writer is the caller's own. A store that keeps no
 *       context inherits the defaults: they ignore it and return bindings without one.
 *   <li><b>Corrupt data.</b> A stored value the implementation cannot parse is treated as absent
 *       (and overwritten by the next claim), never surfaced as an exception.
 * </ul>
 */
public interface BindingStore extends AutoCloseable {

  /**
   * Returns the key's binding, refreshing its TTL, or, when there is none, binds the key to
   * {@code candidateReplicaId} with a fresh generation and returns that ({@link Binding#written()}
   * true). One atomic operation.
   */
  CompletionStage<Binding> getOrClaim(BindingKey key, String candidateReplicaId, Duration ttl);

  /**
   * Moves the key to {@code newReplicaId} if its stored generation is {@code expectedGeneration}
   * (compare-and-set), giving it a higher generation and refreshing its TTL; returns the binding now
   * stored. When the stored generation differs (another gateway repinned first) the stored binding
   * is returned unchanged, with {@link Binding#written()} false, and the caller adopts it. When the
   * key has no binding (expired), it is claimed for {@code newReplicaId}.
   */
  CompletionStage<Binding> repin(BindingKey key, long expectedGeneration, String newReplicaId,
      Duration ttl);

  /**
   * As {@link #getOrClaim(BindingKey, String, Duration)}, and stores {@code turn} (the request being
   * routed: its {@code ageMillis} is ignored, the store stamps its own time) as the key's session
   * context in the same operation; the returned binding carries the context stored before, if
   * another writer stored it. The default ignores {@code turn}.
   */
  default CompletionStage<Binding> getOrClaim(BindingKey key, String candidateReplicaId,
      Duration ttl, SessionContext turn) {
    return getOrClaim(key, candidateReplicaId, ttl);
  }

  /**
   * As {@link #repin(BindingKey, long, String, Duration)}, and, when the repin applies, stores
   * {@code turn} as the key's session context; a repin that does not apply returns the stored
   * binding with its context (if another writer stored it). The default ignores {@code turn}.
   */
  default CompletionStage<Binding> repin(BindingKey key, long expectedGeneration,
      String newReplicaId, Duration ttl, SessionContext turn) {
    return repin(key, expectedGeneration, newReplicaId, ttl);
  }

  /**
   * A {@link LoadExchange} over the same store, which routers sharing the store use by default to
   * see the prefill the others queued (each router publishes every 100 ms). The default: none.
   * The store owns the exchange and ends it when it closes.
   */
  default Optional<LoadExchange> sharedLoadExchange() {
    return Optional.empty();
  }

  /**
   * Reads the key's binding without refreshing it (for tools and tests), with its stored session
   * context whoever wrote it.
   */
  CompletionStage<Optional<Binding>> get(BindingKey key);

  /** Releases the store's resources (connections it owns). Idempotent. */
  @Override
  void close();
}
