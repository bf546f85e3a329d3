package io.affinityrouter.examples.micrometer;

import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.SessionContext;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * A {@link BindingStore} that times every call of the store it wraps, from the call to the stage's
 * completion, as the timer {@value #LATENCY} (a Prometheus histogram
 * {@code affinity_router_store_latency_seconds_bucket}) tagged {@code operation}
 * ({@code get_or_claim}, {@code repin}, {@code get}) and {@code outcome} ({@code ok},
 * {@code error}). A call the router gave up on (its store timeout) is still timed when the store
 * answers: late answers show as the histogram's tail.
 *
 * <p>Thread-safe and non-blocking, as the wrapped store. {@link #close()} closes the wrapped store
 * only if this decorator owns it ({@link #wrap(BindingStore, MeterRegistry, boolean)}).
 */
public final class TimedBindingStore implements BindingStore {
  /** Store call latency, by operation and outcome. */
  public static final String LATENCY = "affinity.router.store.latency";

  private final BindingStore store;
  private final boolean owns;
  private final Timer[] timers = new Timer[6];

  private TimedBindingStore(BindingStore store, MeterRegistry registry, boolean owns) {
    this.store = Objects.requireNonNull(store, "store");
    this.owns = owns;
    Objects.requireNonNull(registry, "registry");
    String[] ops = {"get_or_claim", "repin", "get"};
    for (int i = 0; i < ops.length; i++) {
      timers[2 * i] = timer(registry, ops[i], "ok");
      timers[2 * i + 1] = timer(registry, ops[i], "error");
    }
  }

  /**
   * Wraps {@code store}; with {@code owns}, {@link #close()} closes it.
   *
   * @throws NullPointerException if an argument is null
   */
  public static TimedBindingStore wrap(BindingStore store, MeterRegistry registry, boolean owns) {
    return new TimedBindingStore(store, registry, owns);
  }

  private static Timer timer(MeterRegistry registry, String op, String outcome) {
    return Timer.builder(LATENCY)
        .description("Binding store call latency, to the stage's completion")
        .tag("operation", op)
        .tag("outcome", outcome)
        .publishPercentileHistogram()
        .minimumExpectedValue(Duration.ofNanos(10_000)) // an in-memory store answers in µs...
        .maximumExpectedValue(Duration.ofSeconds(10)) // ...a stalled Redis in seconds
        .register(registry);
  }

  @Override
  public CompletionStage<Binding> getOrClaim(BindingKey key, String candidateReplicaId,
      Duration ttl) {
    return timed(0, store.getOrClaim(key, candidateReplicaId, ttl), System.nanoTime());
  }

  @Override
  public CompletionStage<Binding> repin(BindingKey key, long expectedGeneration,
      String newReplicaId, Duration ttl) {
    return timed(1, store.repin(key, expectedGeneration, newReplicaId, ttl), System.nanoTime());
  }

  @Override
  public CompletionStage<Binding> getOrClaim(BindingKey key, String candidateReplicaId,
      Duration ttl, SessionContext turn) {
    return timed(0, store.getOrClaim(key, candidateReplicaId, ttl, turn), System.nanoTime());
  }

  @Override
  public CompletionStage<Binding> repin(BindingKey key, long expectedGeneration,
      String newReplicaId, Duration ttl, SessionContext turn) {
    return timed(1, store.repin(key, expectedGeneration, newReplicaId, ttl, turn),
        System.nanoTime());
  }

  @Override
  public CompletionStage<Optional<Binding>> get(BindingKey key) {
    return timed(2, store.get(key), System.nanoTime());
  }

  private <T> CompletionStage<T> timed(int op, CompletionStage<T> stage, long start) {
    stage.whenComplete((v, e) -> timers[2 * op + (e == null ? 0 : 1)]
        .record(System.nanoTime() - start, TimeUnit.NANOSECONDS));
    return stage;
  }

  @Override
  public void close() {
    if (owns) {
      store.close();
    }
  }
}
