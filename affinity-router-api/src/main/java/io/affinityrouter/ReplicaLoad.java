package io.affinityrouter;

import io.affinityrouter.internal.Checks;
import java.util.Objects;
import java.util.OptionalDouble;

/**
 * A snapshot of a replica's load as its engine last reported it, typically parsed from a Prometheus
 * {@code /metrics} scrape (see {@code io.affinityrouter.core.metrics.EngineMetrics}).
 *
 * <p>Snapshots are stale by the scrape interval; the router adds its own in-flight work on top, so
 * a burst between two scrapes is still seen. Figures that an engine does not report are left at
 * their "unknown" value: {@link #kvUsage()} empty, capacities and rates {@code 0}.
 *
 * <p>Immutable and thread-safe. Built with {@link #builder()}; every setter refuses negative or NaN
 * figures with an {@link IllegalArgumentException}.
 */
public final class ReplicaLoad {
  private static final OptionalDouble NO_KV_USAGE = OptionalDouble.empty();

  /** A load about which nothing is known: no running or waiting requests, nothing reported. */
  public static final ReplicaLoad UNKNOWN = builder().build();

  private final int runningRequests;
  private final int waitingRequests;
  private final OptionalDouble kvUsage;
  private final long kvCapacityTokens;
  private final double outputTokensPerSecond;
  private final long kvWrittenTokens;

  private ReplicaLoad(Builder b) {
    this.runningRequests = b.runningRequests;
    this.waitingRequests = b.waitingRequests;
    this.kvUsage = Double.isNaN(b.kvUsage) ? NO_KV_USAGE : OptionalDouble.of(b.kvUsage);
    this.kvCapacityTokens = b.kvCapacityTokens;
    this.outputTokensPerSecond = b.outputTokensPerSecond;
    this.kvWrittenTokens = b.kvWrittenTokens;
  }

  /** Returns a builder with every figure unknown. */
  public static Builder builder() {
    return new Builder();
  }

  /** Requests in the engine's running batch ({@code vllm:num_requests_running}). */
  public int runningRequests() {
    return runningRequests;
  }

  /** Requests queued in the engine, not yet scheduled ({@code vllm:num_requests_waiting}). */
  public int waitingRequests() {
    return waitingRequests;
  }

  /** Running plus waiting requests. */
  public int inFlightRequests() {
    return runningRequests + waitingRequests;
  }

  /** The fraction of KV cache in use, 0..1 ({@code vllm:kv_cache_usage_perc}), if reported. */
  public OptionalDouble kvUsage() {
    return kvUsage;
  }

  /** KV cache capacity in tokens (blocks × block size), or {@code 0} when not reported. */
  public long kvCapacityTokens() {
    return kvCapacityTokens;
  }

  /**
   * Free KV capacity in tokens, {@code (1 - kvUsage) × kvCapacityTokens}, or {@code -1} when either
   * figure is not reported.
   */
  public long kvFreeTokens() {
    if (kvCapacityTokens == 0 || kvUsage.isEmpty()) {
      return -1;
    }
    return (long) ((1.0 - kvUsage.getAsDouble()) * kvCapacityTokens);
  }

  /** Output tokens generated per second across the whole batch, or {@code 0} when not reported. */
  public double outputTokensPerSecond() {
    return outputTokensPerSecond;
  }

  /**
   * Tokens the engine has written to its KV cache since it started, or {@code -1} when not
   * reported: the prompt tokens it prefilled or loaded from outside (those its prefix cache did not
   * serve) plus the tokens it generated. A counter: vLLM's
   * {@code prompt_tokens_by_source_total{source="local_compute"|"external_kv_transfer"} +
   * generation_tokens_total}, or on older vLLM {@code prefix_cache_queries_total -
   * prefix_cache_hits_total + generation_tokens_total} (which counts a request again at each
   * scheduling retry, so it runs high under KV pressure). Its rate is how fast the engine's cache turns over, so the router can
   * tell how long a prefix it sent there stays cached, counting every gateway's traffic, not only
   * its own. A counter lower than the one seen before means the engine restarted.
   */
  public long kvWrittenTokens() {
    return kvWrittenTokens;
  }

  /** Returns a builder initialised with this snapshot's figures. */
  public Builder toBuilder() {
    Builder b = new Builder()
        .runningRequests(runningRequests)
        .waitingRequests(waitingRequests)
        .kvCapacityTokens(kvCapacityTokens)
        .outputTokensPerSecond(outputTokensPerSecond);
    b.kvWrittenTokens = kvWrittenTokens;
    kvUsage.ifPresent(b::kvUsage);
    return b;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof ReplicaLoad)) {
      return false;
    }
    ReplicaLoad that = (ReplicaLoad) o;
    return runningRequests == that.runningRequests
        && waitingRequests == that.waitingRequests
        && kvCapacityTokens == that.kvCapacityTokens
        && Double.compare(outputTokensPerSecond, that.outputTokensPerSecond) == 0
        && kvWrittenTokens == that.kvWrittenTokens
        && kvUsage.equals(that.kvUsage);
  }

  @Override
  public int hashCode() {
    return Objects.hash(runningRequests, waitingRequests, kvUsage, kvCapacityTokens,
        outputTokensPerSecond, kvWrittenTokens);
  }

  @Override
  public String toString() {
    return "ReplicaLoad{running=" + runningRequests + ", waiting=" + waitingRequests
        + ", kvUsage=" + (kvUsage.isPresent() ? kvUsage.getAsDouble() : "?")
        + ", kvCapacityTokens=" + kvCapacityTokens
        + ", outputTokensPerSecond=" + outputTokensPerSecond
        + (kvWrittenTokens >= 0 ? ", kvWrittenTokens=" + kvWrittenTokens : "") + '}';
  }

  /** Builds a {@link ReplicaLoad}. Not thread-safe. */
  public static final class Builder {
    private int runningRequests;
    private int waitingRequests;
    private double kvUsage = Double.NaN;
    private long kvCapacityTokens;
    private double outputTokensPerSecond;
    private long kvWrittenTokens = -1;

    private Builder() {}

    /** Sets the running requests; must be {@code >= 0}. */
    public Builder runningRequests(int runningRequests) {
      this.runningRequests = (int) Checks.nonNegative(runningRequests, "runningRequests");
      return this;
    }

    /** Sets the waiting requests; must be {@code >= 0}. */
    public Builder waitingRequests(int waitingRequests) {
      this.waitingRequests = (int) Checks.nonNegative(waitingRequests, "waitingRequests");
      return this;
    }

    /** Sets the KV cache usage; must be in 0..1 (not NaN). */
    public Builder kvUsage(double kvUsage) {
      this.kvUsage = Checks.fraction(kvUsage, "kvUsage");
      return this;
    }

    /** Sets the KV capacity in tokens; must be {@code >= 0} ({@code 0} = unknown). */
    public Builder kvCapacityTokens(long kvCapacityTokens) {
      this.kvCapacityTokens = Checks.nonNegative(kvCapacityTokens, "kvCapacityTokens");
      return this;
    }

    /** Sets the output tokens per second; finite and {@code >= 0} ({@code 0} = unknown). */
    public Builder outputTokensPerSecond(double outputTokensPerSecond) {
      this.outputTokensPerSecond =
          Checks.nonNegativeFinite(outputTokensPerSecond, "outputTokensPerSecond");
      return this;
    }

    /** Sets the tokens written to the KV cache so far (a counter); must be {@code >= 0}. */
    public Builder kvWrittenTokens(long kvWrittenTokens) {
      this.kvWrittenTokens = Checks.nonNegative(kvWrittenTokens, "kvWrittenTokens");
      return this;
    }

    /** Returns the snapshot. */
    public ReplicaLoad build() {
      return new ReplicaLoad(this);
    }
  }
}
