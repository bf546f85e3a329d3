package io.affinityrouter.examples.simulator.engine;

import io.affinityrouter.examples.simulator.fleet.EngineConfig;
import java.util.List;
import java.util.Locale;

/**
 * The fleet and gateways of a run.
 *
 * @param replicas replicas in the fleet (including those that become ready later)
 * @param initiallyReady how many of them (the first ones) are ready at time 0
 * @param gateways gateways, each with its own strategy instance (default 1)
 * @param scrapeIntervalNanos how often replicas' loads reach the gateways (default 100 ms)
 * @param retryNanos how long a gateway waits before retrying a request the strategy refused or whose
 *     replica was lost (default 50 ms)
 * @param engine each replica's engine
 * @param events changes of the fleet during the run
 * @param seed the run's seed
 * @param asleep how many of the initially ready replicas (the last ones) start with the model asleep
 *     (default 0)
 * @param wakeNanos how long a replica takes to wake its model when a request reaches it asleep
 *     (default {@link #DEFAULT_WAKE_NANOS})
 * @param front how the load balancer in front of the gateways picks a request's gateway (default
 *     {@link Front#REQUEST})
 */
public record SimulationConfig(int replicas, int initiallyReady, int gateways,
    long scrapeIntervalNanos, long retryNanos, EngineConfig engine, List<FleetEvent> events,
    long seed, int asleep, long wakeNanos, Front front) {

  /** How the load balancer in front of the gateways spreads requests over them. */
  public enum Front {
    /** By a hash of the seed and the request id: a session's turns may reach any gateway. */
    REQUEST,
    /**
     * By a hash of the seed and the session id (a load balancer hashing the session header): every
     * turn of a session reaches the same gateway; a request without a session falls back to
     * {@link #REQUEST}'s hash.
     */
    SESSION;

    /** The lower-case name the command line takes ({@code request}, {@code session}). */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** Default scrape interval: 100 ms (gateways scrape engine metrics every 50–100 ms). */
  public static final long DEFAULT_SCRAPE_NANOS = 100_000_000L;
  /** Default retry delay: 50 ms. */
  public static final long DEFAULT_RETRY_NANOS = 50_000_000L;
  /**
   * Default time to wake a sleeping model: 5 s. An assumption (vLLM's sleep level 1 keeps the
   * weights in CPU memory and copies them back on wake-up; no measured figure for this model/GPU pair
   * was at hand), configurable.
   */
  public static final long DEFAULT_WAKE_NANOS = 5_000_000_000L;

  /** A configuration without sleeping replicas, requests spread over gateways one by one. */
  public SimulationConfig(int replicas, int initiallyReady, int gateways, long scrapeIntervalNanos,
      long retryNanos, EngineConfig engine, List<FleetEvent> events, long seed) {
    this(replicas, initiallyReady, gateways, scrapeIntervalNanos, retryNanos, engine, events, seed,
        0, DEFAULT_WAKE_NANOS);
  }

  /** A configuration whose requests are spread over gateways one by one ({@link Front#REQUEST}). */
  public SimulationConfig(int replicas, int initiallyReady, int gateways, long scrapeIntervalNanos,
      long retryNanos, EngineConfig engine, List<FleetEvent> events, long seed, int asleep,
      long wakeNanos) {
    this(replicas, initiallyReady, gateways, scrapeIntervalNanos, retryNanos, engine, events, seed,
        asleep, wakeNanos, Front.REQUEST);
  }

  /**
   * Validates the configuration.
   *
   * @throws IllegalArgumentException on non-positive counts or intervals, or a null front
   */
  public SimulationConfig {
    if (replicas <= 0) {
      throw new IllegalArgumentException("replicas: " + replicas + " (expected: > 0)");
    }
    if (initiallyReady <= 0 || initiallyReady > replicas) {
      throw new IllegalArgumentException(
          "initiallyReady: " + initiallyReady + " (expected: in 1.." + replicas + ")");
    }
    if (gateways <= 0) {
      throw new IllegalArgumentException("gateways: " + gateways + " (expected: > 0)");
    }
    if (scrapeIntervalNanos <= 0) {
      throw new IllegalArgumentException(
          "scrapeIntervalNanos: " + scrapeIntervalNanos + " (expected: > 0)");
    }
    if (retryNanos <= 0) {
      throw new IllegalArgumentException("retryNanos: " + retryNanos + " (expected: > 0)");
    }
    if (asleep < 0 || asleep >= initiallyReady) {
      throw new IllegalArgumentException(
          "asleep: " + asleep + " (expected: in 0.." + (initiallyReady - 1) + ")");
    }
    if (wakeNanos < 0) {
      throw new IllegalArgumentException("wakeNanos: " + wakeNanos + " (expected: >= 0)");
    }
    if (front == null) {
      throw new IllegalArgumentException("front: null (expected: REQUEST or SESSION)");
    }
    events = List.copyOf(events);
  }

  /** A steady fleet of {@code replicas} behind {@code gateways} gateways with the defaults. */
  public static SimulationConfig steady(int replicas, int gateways, long seed) {
    return new SimulationConfig(replicas, replicas, gateways, DEFAULT_SCRAPE_NANOS,
        DEFAULT_RETRY_NANOS, EngineConfig.defaults(), List.of(), seed);
  }

  /** Returns a copy with another engine configuration. */
  public SimulationConfig withEngine(EngineConfig e) {
    return new SimulationConfig(replicas, initiallyReady, gateways, scrapeIntervalNanos,
        retryNanos, e, events, seed, asleep, wakeNanos, front);
  }

  /** Returns a copy whose last {@code count} initially ready replicas start with the model asleep. */
  public SimulationConfig withAsleep(int count, long wake) {
    return new SimulationConfig(replicas, initiallyReady, gateways, scrapeIntervalNanos,
        retryNanos, engine, events, seed, count, wake, front);
  }

  /** Returns a copy whose load balancer picks gateways by {@code f}. */
  public SimulationConfig withFront(Front f) {
    return new SimulationConfig(replicas, initiallyReady, gateways, scrapeIntervalNanos,
        retryNanos, engine, events, seed, asleep, wakeNanos, f);
  }
}
