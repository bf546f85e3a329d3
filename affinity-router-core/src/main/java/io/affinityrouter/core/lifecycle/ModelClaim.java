package io.affinityrouter.core.lifecycle;

import io.affinityrouter.internal.Checks;
import java.time.Duration;
import java.util.Objects;

/**
 * What one model needs from the fleet: the GPU memory an awake copy takes (weights plus the KV it
 * should get), how many replicas keep it awake at least and at most, how long a copy may sit idle
 * before it is put to sleep, and the sleep level (vLLM: 1 offloads the weights to CPU memory and
 * wakes in seconds, 2 drops them and wakes as a reload).
 *
 * <pre>{@code
 * ModelClaim claim = ModelClaim.builder("qwen2.5-7b")
 *     .gpuMemoryBytes(30L << 30).minAwake(1).maxAwake(4).idleTimeout(Duration.ofMinutes(5))
 *     .build();
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class ModelClaim {
  /** Default {@link Builder#minAwake}: {@value}. */
  public static final int DEFAULT_MIN_AWAKE = 0;
  /** Default {@link Builder#maxAwake}: {@value}. */
  public static final int DEFAULT_MAX_AWAKE = Integer.MAX_VALUE;
  /** Default {@link Builder#idleTimeout}: 5 minutes. */
  public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofMinutes(5);
  /** Default {@link Builder#sleepLevel}: {@value} (weights kept in CPU memory). */
  public static final int DEFAULT_SLEEP_LEVEL = 1;

  private final String model;
  private final long gpuMemoryBytes;
  private final int minAwake;
  private final int maxAwake;
  private final Duration idleTimeout;
  private final int sleepLevel;

  private ModelClaim(Builder b) {
    this.model = b.model;
    this.gpuMemoryBytes = b.gpuMemoryBytes;
    this.minAwake = b.minAwake;
    this.maxAwake = b.maxAwake;
    this.idleTimeout = b.idleTimeout;
    this.sleepLevel = b.sleepLevel;
  }

  /** A builder for the claim of {@code model} (the name requests and replicas use). */
  public static Builder builder(String model) {
    return new Builder(Checks.notBlank(model, "model"));
  }

  /** The model's name, as in {@code RoutingRequest.model()} and {@code Replica.models()}. */
  public String model() {
    return model;
  }

  /** GPU memory an awake copy takes, weights and KV, in bytes. */
  public long gpuMemoryBytes() {
    return gpuMemoryBytes;
  }

  /** Replicas that keep the model awake at least, idle or not. */
  public int minAwake() {
    return minAwake;
  }

  /** Replicas that keep the model awake at most. */
  public int maxAwake() {
    return maxAwake;
  }

  /** How long an awake copy may go without a request before it is put to sleep. */
  public Duration idleTimeout() {
    return idleTimeout;
  }

  /** The sleep level: 1 or 2. */
  public int sleepLevel() {
    return sleepLevel;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ModelClaim c && model.equals(c.model) && gpuMemoryBytes == c.gpuMemoryBytes
        && minAwake == c.minAwake && maxAwake == c.maxAwake && idleTimeout.equals(c.idleTimeout)
        && sleepLevel == c.sleepLevel;
  }

  @Override
  public int hashCode() {
    return Objects.hash(model, gpuMemoryBytes, minAwake, maxAwake, idleTimeout, sleepLevel);
  }

  @Override
  public String toString() {
    return "ModelClaim{" + model + ", " + gpuMemoryBytes + " B, awake " + minAwake + ".."
        + (maxAwake == Integer.MAX_VALUE ? "any" : String.valueOf(maxAwake)) + ", idle "
        + idleTimeout + ", level " + sleepLevel + "}";
  }

  /** Builds a {@link ModelClaim}; each setter checks its argument. Not thread-safe. */
  public static final class Builder {
    private final String model;
    private long gpuMemoryBytes = -1;
    private int minAwake = DEFAULT_MIN_AWAKE;
    private int maxAwake = DEFAULT_MAX_AWAKE;
    private Duration idleTimeout = DEFAULT_IDLE_TIMEOUT;
    private int sleepLevel = DEFAULT_SLEEP_LEVEL;

    private Builder(String model) {
      this.model = model;
    }

    /** GPU memory an awake copy takes, weights plus its KV, in bytes; required. */
    public Builder gpuMemoryBytes(long bytes) {
      this.gpuMemoryBytes = Checks.positive(bytes, "gpuMemoryBytes");
      return this;
    }

    /** Replicas kept awake even when idle; default 0. */
    public Builder minAwake(int replicas) {
      if (replicas < 0) {
        throw new IllegalArgumentException("minAwake: " + replicas + " (expected: >= 0)");
      }
      this.minAwake = replicas;
      return this;
    }

    /** Replicas kept awake at most; default unbounded. */
    public Builder maxAwake(int replicas) {
      this.maxAwake = Checks.positive(replicas, "maxAwake");
      return this;
    }

    /** Idle time after which an awake copy sleeps (if above the minimum); default 5 minutes. */
    public Builder idleTimeout(Duration idle) {
      this.idleTimeout = Checks.positive(idle, "idleTimeout");
      return this;
    }

    /** vLLM's sleep level, 1 or 2; default 1. */
    public Builder sleepLevel(int level) {
      if (level != 1 && level != 2) {
        throw new IllegalArgumentException("sleepLevel: " + level + " (expected: 1 or 2)");
      }
      this.sleepLevel = level;
      return this;
    }

    /**
     * Builds the claim.
     *
     * @throws IllegalStateException if no GPU memory was given, or {@code minAwake > maxAwake}
     */
    public ModelClaim build() {
      if (gpuMemoryBytes < 0) {
        throw new IllegalStateException("gpuMemoryBytes: not set (expected: > 0)");
      }
      if (minAwake > maxAwake) {
        throw new IllegalStateException(
            "minAwake: " + minAwake + " (expected: <= maxAwake " + maxAwake + ")");
      }
      return new ModelClaim(this);
    }
  }
}
