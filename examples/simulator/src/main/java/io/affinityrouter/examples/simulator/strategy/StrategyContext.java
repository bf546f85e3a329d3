package io.affinityrouter.examples.simulator.strategy;

import java.time.InstantSource;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * What a run gives the strategies it creates: the seed, the simulated clock, and objects shared by
 * the gateways of the run (e.g. one binding store).
 *
 * <p>Not thread-safe: one per run, used from the simulation thread.
 */
public final class StrategyContext {
  private final long seed;
  private final InstantSource clock;
  private final int gateways;
  private final Map<String, Object> shared = new HashMap<>();
  private java.util.function.Consumer<String> wakes = id -> { };
  private final VirtualScheduler scheduler;

  /**
   * Creates a context.
   *
   * @param seed the run's seed
   * @param clock simulated time
   * @param gateways the number of gateways
   */
  public StrategyContext(long seed, InstantSource clock, int gateways) {
    this.seed = seed;
    this.clock = clock;
    this.gateways = gateways;
    this.scheduler = new VirtualScheduler(clock);
  }

  /** A scheduler on simulated time (its tasks run as the simulation's events). */
  public VirtualScheduler scheduler() {
    return scheduler;
  }

  /** The run's seed. */
  public long seed() {
    return seed;
  }

  /** A seed for one gateway's random source, derived from the run's seed. */
  public long seedFor(int gateway) {
    return seed * 1_000_003L + gateway * 7919L + 17;
  }

  /** Simulated time. */
  public InstantSource clock() {
    return clock;
  }

  /** The number of gateways in the run. */
  public int gateways() {
    return gateways;
  }

  /** Returns the run's shared object under {@code key}, creating it on first use. */
  /**
   * Asks the fleet to wake the model on replica {@code replicaId} (as a gateway would call vLLM's
   * {@code /wake_up}); the replica wakes after the run's wake time. A no-op if it is not asleep.
   */
  public void requestWake(String replicaId) {
    wakes.accept(replicaId);
  }

  /** Sets what {@link #requestWake} does (the simulation's hook). */
  public void onWakeRequest(java.util.function.Consumer<String> hook) {
    this.wakes = java.util.Objects.requireNonNull(hook, "hook");
  }

  @SuppressWarnings("unchecked")
  public <T> T shared(String key, Supplier<T> factory) {
    return (T) shared.computeIfAbsent(key, k -> factory.get());
  }
}
