package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.core.lifecycle.LifecycleState;
import io.affinityrouter.core.lifecycle.ModelClaim;
import io.affinityrouter.core.lifecycle.ModelLifecycle;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;

/**
 * The model lifecycle's meters, read from {@link ModelLifecycle#state()} at each scrape (one
 * snapshot serves every meter of a scrape):
 *
 * <table>
 *   <caption>Prometheus names</caption>
 *   <tr><td>{@code affinity_router_lifecycle_copies}</td><td>{@code model}, {@code state}
 *       ({@code awake}, {@code asleep}, {@code waking})</td>
 *       <td>copies of each claimed model</td></tr>
 *   <tr><td>{@code affinity_router_lifecycle_min_awake}, {@code ..._max_awake}</td>
 *       <td>{@code model}</td><td>the claim's bounds (max absent when unbounded)</td></tr>
 *   <tr><td>{@code affinity_router_lifecycle_idle_seconds}</td><td>{@code model}</td>
 *       <td>time since the model's last request through this gateway</td></tr>
 *   <tr><td>{@code affinity_router_lifecycle_leader}</td><td></td><td>1 while this gateway
 *       holds the lease (only the leader acts), else 0</td></tr>
 *   <tr><td>{@code affinity_router_lifecycle_actions_total}</td><td>{@code outcome}
 *       ({@code done}, {@code failed}, {@code unsupported})</td><td>sleeps and wakes carried
 *       out</td></tr>
 *   <tr><td>{@code affinity_router_lifecycle_actions_in_flight}</td><td></td><td>actions started
 *       and not yet answered</td></tr>
 * </table>
 */
final class LifecycleMeters {
  static final String COPIES = "affinity.router.lifecycle.copies";
  static final String MIN_AWAKE = "affinity.router.lifecycle.min.awake";
  static final String MAX_AWAKE = "affinity.router.lifecycle.max.awake";
  static final String IDLE = "affinity.router.lifecycle.idle.seconds";
  static final String LEADER = "affinity.router.lifecycle.leader";
  static final String ACTIONS = "affinity.router.lifecycle.actions";
  static final String IN_FLIGHT = "affinity.router.lifecycle.actions.in.flight";

  /** A scrape reads every meter within this long: they share one snapshot. */
  private static final long SNAPSHOT_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  private final ModelLifecycle lifecycle;
  private volatile LifecycleState last;
  private volatile long lastAt;

  private LifecycleMeters(ModelLifecycle lifecycle) {
    this.lifecycle = lifecycle;
  }

  /** Registers the lifecycle's meters; {@code claims} names the models. */
  static void register(MeterRegistry registry, ModelLifecycle lifecycle, List<ModelClaim> claims) {
    LifecycleMeters m = new LifecycleMeters(lifecycle);
    for (ModelClaim claim : claims) {
      String model = claim.model();
      m.gauge(registry, COPIES, "Copies of a claimed model, by state", model, "awake",
          s -> s.awake());
      m.gauge(registry, COPIES, "Copies of a claimed model, by state", model, "asleep",
          s -> s.asleep());
      m.gauge(registry, COPIES, "Copies of a claimed model, by state", model, "waking",
          s -> s.waking());
      m.gauge(registry, MIN_AWAKE, "The claim's least awake copies", model, null,
          s -> s.minAwake());
      if (claim.maxAwake() != Integer.MAX_VALUE) {
        m.gauge(registry, MAX_AWAKE, "The claim's most awake copies", model, null,
            s -> s.maxAwake());
      }
      m.gauge(registry, IDLE, "Seconds since the model's last request through this gateway",
          model, null, s -> s.idleSeconds());
    }
    Gauge.builder(LEADER, m, x -> x.state().leader() ? 1 : 0)
        .description("1 while this gateway holds the lifecycle lease (only the leader acts)")
        .strongReference(true).register(registry);
    Gauge.builder(IN_FLIGHT, m, x -> x.state().inFlight().size())
        .description("Lifecycle actions started and not yet answered")
        .strongReference(true).register(registry);
    m.actions(registry, "done", LifecycleState::actionsDone);
    m.actions(registry, "failed", LifecycleState::actionsFailed);
    m.actions(registry, "unsupported", LifecycleState::actionsUnsupported);
  }

  private LifecycleState state() {
    long now = System.nanoTime();
    LifecycleState s = last;
    if (s == null || now - lastAt > SNAPSHOT_NANOS) {
      s = lifecycle.state();
      last = s;
      lastAt = now;
    }
    return s;
  }

  private void gauge(MeterRegistry registry, String name, String description, String model,
      String state, ToDoubleFunction<LifecycleState.ModelStatus> value) {
    Gauge.Builder<LifecycleMeters> b = Gauge.builder(name, this, x -> {
      for (LifecycleState.ModelStatus s : x.state().models()) {
        if (s.model().equals(model)) {
          return value.applyAsDouble(s);
        }
      }
      return Double.NaN;
    }).description(description).tag("model", model).strongReference(true);
    if (state != null) {
      b.tag("state", state);
    }
    b.register(registry);
  }

  private void actions(MeterRegistry registry, String outcome,
      ToDoubleFunction<LifecycleState> count) {
    FunctionCounter.builder(ACTIONS, this, x -> count.applyAsDouble(x.state()))
        .description("Sleeps and wakes the lifecycle carried out, by outcome")
        .tag("outcome", outcome)
        .register(registry);
  }
}
