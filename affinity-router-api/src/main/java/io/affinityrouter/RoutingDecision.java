package io.affinityrouter;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The outcome of {@link Router#select}: a value for every outcome, never an exception.
 *
 * <p>Either <em>routed</em> ({@link #isRouted()}): the replica, the {@link RequestLease} that counts
 * the request as in-flight work until closed, why ({@link #reason()}), the chosen replica's
 * {@link #scores()}, how many prompt blocks matched its cached prefix, the session binding's
 * generation, and whether the binding store was bypassed ({@link #isDegraded()}). Or <em>not
 * routed</em>: a reason a gateway maps to an HTTP status ({@link RoutingReason#ALL_AT_LIMIT} to
 * {@code 429}, {@link RoutingReason#MODEL_WAKING}, {@link RoutingReason#MODEL_LOADING} and
 * {@link RoutingReason#NO_REPLICA} to {@code 503}) and a {@link #retryAfter()} hint.
 *
 * <p>Built only through the named factories ({@link #routed}, {@link #notRouted}, {@link
 * #modelWaking}), as gRPC's {@code PickResult}. Immutable and thread-safe; the lease it carries is
 * thread-safe too.
 */
public final class RoutingDecision {
  private final RoutingReason reason;
  private final @Nullable Replica replica;
  private final @Nullable RequestLease lease;
  private final ScoreBreakdown scores;
  private final int matchedBlocks;
  private final int promptBlocks;
  private final long generation;
  private final boolean degraded;
  private final @Nullable RepinCause repinCause;
  private final @Nullable String previousReplicaId;
  private final Duration retryAfter;
  private final @Nullable String wokenReplicaId;

  private RoutingDecision(RoutingReason reason, @Nullable Replica replica,
      @Nullable RequestLease lease, ScoreBreakdown scores, int matchedBlocks, int promptBlocks,
      long generation, boolean degraded, @Nullable RepinCause repinCause,
      @Nullable String previousReplicaId, Duration retryAfter, @Nullable String wokenReplicaId) {
    this.reason = reason;
    this.replica = replica;
    this.lease = lease;
    this.scores = scores;
    this.matchedBlocks = matchedBlocks;
    this.promptBlocks = promptBlocks;
    this.generation = generation;
    this.degraded = degraded;
    this.repinCause = repinCause;
    this.previousReplicaId = previousReplicaId;
    this.retryAfter = retryAfter;
    this.wokenReplicaId = wokenReplicaId;
  }

  /**
   * Starts a routed decision: {@code RoutingDecision.routed(reason, replica, lease).scores(s)
   * .prefixBlocks(matched, prompt).binding(generation, degraded).build()}. A repin adds {@link
   * Builder#repinnedFrom}.
   *
   * @param reason a routed reason ({@link RoutingReason#isRouted()})
   * @param replica the chosen replica
   * @param lease the lease already counting the request on {@code replica}
   * @throws IllegalArgumentException if the reason is not a routed one
   */
  public static Builder routed(RoutingReason reason, Replica replica, RequestLease lease) {
    Objects.requireNonNull(reason, "reason");
    if (!reason.isRouted()) {
      throw new IllegalArgumentException("reason: " + reason + " (expected: a routed reason)");
    }
    return new Builder(reason, Objects.requireNonNull(replica, "replica"),
        Objects.requireNonNull(lease, "lease"));
  }

  /**
   * A decision that routes nothing.
   *
   * @param reason a not-routed reason
   * @param retryAfter when the caller may try again (the gateway's {@code Retry-After})
   * @throws IllegalArgumentException if the reason is a routed one, or a negative retry hint
   */
  public static RoutingDecision notRouted(RoutingReason reason, Duration retryAfter) {
    Objects.requireNonNull(reason, "reason");
    if (reason.isRouted()) {
      throw new IllegalArgumentException("reason: " + reason + " (expected: a not-routed reason)");
    }
    return notRouted(reason, retryAfter, null);
  }

  /**
   * {@link RoutingReason#MODEL_WAKING}: the model sleeps everywhere and {@code wokenReplicaId} was
   * asked to wake it.
   *
   * @throws IllegalArgumentException if the id is empty, or a negative retry hint
   */
  public static RoutingDecision modelWaking(String wokenReplicaId, Duration retryAfter) {
    if (Objects.requireNonNull(wokenReplicaId, "wokenReplicaId").isEmpty()) {
      throw new IllegalArgumentException("wokenReplicaId: \"\" (expected: non-empty)");
    }
    return notRouted(RoutingReason.MODEL_WAKING, retryAfter, wokenReplicaId);
  }

  private static RoutingDecision notRouted(RoutingReason reason, Duration retryAfter,
      @Nullable String wokenReplicaId) {
    if (Objects.requireNonNull(retryAfter, "retryAfter").isNegative()) {
      throw new IllegalArgumentException("retryAfter: " + retryAfter + " (expected: >= 0)");
    }
    return new RoutingDecision(reason, null, null, ScoreBreakdown.NONE, 0, 0, 0, false, null, null,
        retryAfter, wokenReplicaId);
  }

  /**
   * This routed decision with another lease, for a wrapper that adds to what closing it releases.
   *
   * @throws IllegalStateException if not {@link #isRouted()}
   */
  public RoutingDecision withLease(RequestLease lease) {
    requireRouted();
    return new RoutingDecision(reason, replica, Objects.requireNonNull(lease, "lease"), scores,
        matchedBlocks, promptBlocks, generation, degraded, repinCause, previousReplicaId,
        retryAfter, null);
  }

  /**
   * The rest of a routed decision; every part but the reason, replica and lease is optional.
   * Not thread-safe; build once.
   */
  public static final class Builder {
    private final RoutingReason reason;
    private final Replica replica;
    private final RequestLease lease;
    private ScoreBreakdown scores = ScoreBreakdown.NONE;
    private int matchedBlocks;
    private int promptBlocks;
    private long generation;
    private boolean degraded;
    private @Nullable RepinCause repinCause;
    private @Nullable String previousReplicaId;

    private Builder(RoutingReason reason, Replica replica, RequestLease lease) {
      this.reason = reason;
      this.replica = replica;
      this.lease = lease;
    }

    /** The chosen replica's score breakdown; {@link ScoreBreakdown#NONE} if not set. */
    public Builder scores(ScoreBreakdown scores) {
      this.scores = Objects.requireNonNull(scores, "scores");
      return this;
    }

    /**
     * How much of the prompt the chosen replica had cached.
     *
     * @param matchedBlocks prompt blocks found in the chosen replica's cached prefix
     * @param promptBlocks blocks the prompt was hashed into
     * @throws IllegalArgumentException unless {@code 0 <= matchedBlocks <= promptBlocks}
     */
    public Builder prefixBlocks(int matchedBlocks, int promptBlocks) {
      if (matchedBlocks < 0 || matchedBlocks > promptBlocks) {
        throw new IllegalArgumentException("matchedBlocks: " + matchedBlocks
            + " (expected: 0.." + promptBlocks + ", the prompt's blocks)");
      }
      this.matchedBlocks = matchedBlocks;
      this.promptBlocks = promptBlocks;
      return this;
    }

    /**
     * The session binding after this decision.
     *
     * @param generation the binding's generation, {@code 0} without a binding
     * @param degraded whether the binding store was bypassed
     * @throws IllegalArgumentException if the generation is negative
     */
    public Builder binding(long generation, boolean degraded) {
      if (generation < 0) {
        throw new IllegalArgumentException("generation: " + generation + " (expected: >= 0)");
      }
      this.generation = generation;
      this.degraded = degraded;
      return this;
    }

    /**
     * The session moved here off {@code previousReplicaId}; required for, and only for, {@link
     * RoutingReason#SESSION_REPINNED}.
     */
    public Builder repinnedFrom(String previousReplicaId, RepinCause cause) {
      this.previousReplicaId = Objects.requireNonNull(previousReplicaId, "previousReplicaId");
      this.repinCause = Objects.requireNonNull(cause, "cause");
      return this;
    }

    /**
     * The decision.
     *
     * @throws IllegalArgumentException if the reason is {@link RoutingReason#SESSION_REPINNED}
     *     without {@link #repinnedFrom}, or another reason with it
     */
    public RoutingDecision build() {
      if ((reason == RoutingReason.SESSION_REPINNED) != (repinCause != null)) {
        throw new IllegalArgumentException("reason: " + reason
            + " (expected: SESSION_REPINNED exactly when repinnedFrom is given)");
      }
      return new RoutingDecision(reason, replica, lease, scores, matchedBlocks, promptBlocks,
          generation, degraded, repinCause, previousReplicaId, Duration.ZERO, null);
    }
  }

  /** Whether a replica was chosen. */
  public boolean isRouted() {
    return replica != null;
  }

  /** Why the decision came out as it did. */
  public RoutingReason reason() {
    return reason;
  }

  /**
   * The chosen replica.
   *
   * @throws IllegalStateException if not {@link #isRouted()}
   */
  public Replica replica() {
    requireRouted();
    return Objects.requireNonNull(replica);
  }

  /**
   * The lease counting this request on the chosen replica; close it when the request ends.
   *
   * @throws IllegalStateException if not {@link #isRouted()}
   */
  public RequestLease lease() {
    requireRouted();
    return Objects.requireNonNull(lease);
  }

  /** The chosen replica's score breakdown ({@link ScoreBreakdown#NONE} when nothing was scored). */
  public ScoreBreakdown scores() {
    return scores;
  }

  /** Prompt blocks found in the chosen replica's cached prefix. */
  public int matchedBlocks() {
    return matchedBlocks;
  }

  /** Blocks the prompt was hashed into (capped by the router's {@code maxPromptBlocks}). */
  public int promptBlocks() {
    return promptBlocks;
  }

  /** The session binding's generation after this decision; {@code 0} without a binding. */
  public long bindingGeneration() {
    return generation;
  }

  /** Whether the binding store was bypassed (unreachable or too slow) for this decision. */
  public boolean isDegraded() {
    return degraded;
  }

  /** Why the session moved, for {@link RoutingReason#SESSION_REPINNED}. */
  public Optional<RepinCause> repinCause() {
    return Optional.ofNullable(repinCause);
  }

  /** The replica the session was pinned to before a repin; empty for every other decision. */
  public Optional<String> previousReplicaId() {
    return Optional.ofNullable(previousReplicaId);
  }

  /** When a not-routed caller may try again; {@link Duration#ZERO} for routed decisions. */
  public Duration retryAfter() {
    return retryAfter;
  }

  /** For {@link RoutingReason#MODEL_WAKING}: the replica that was asked to wake the model. */
  public Optional<String> wokenReplicaId() {
    return Optional.ofNullable(wokenReplicaId);
  }

  /** A one-line human explanation of the decision (no prompt content). */
  public String explain() {
    StringBuilder sb = new StringBuilder(160);
    sb.append(reason);
    if (!isRouted()) {
      sb.append(", retry after ").append(retryAfter.toMillis()).append(" ms");
      if (wokenReplicaId != null) {
        sb.append(", woke ").append(wokenReplicaId);
      }
      return sb.toString();
    }
    sb.append(" -> ").append(Objects.requireNonNull(replica).id());
    if (repinCause != null) {
      sb.append(" (repinned from ").append(previousReplicaId).append(": ").append(repinCause)
          .append(')');
    }
    if (generation != 0) {
      sb.append(", generation ").append(generation);
    }
    if (degraded) {
      sb.append(", degraded");
    }
    sb.append(String.format(java.util.Locale.ROOT,
        ", prefix %d/%d blocks (%.0f%% of tokens cached), est. TTFT %.1f ms = queue %.1f + prefill %.1f",
        matchedBlocks, promptBlocks, scores.cachedFraction() * 100,
        scores.estimatedTtftSeconds() * 1e3, scores.queueSeconds() * 1e3,
        scores.prefillSeconds() * 1e3));
    if (scores.pluginSeconds() != 0) {
      sb.append(String.format(java.util.Locale.ROOT, " - plugins %.1f",
          scores.pluginSeconds() * 1e3));
    }
    return sb.toString();
  }

  private void requireRouted() {
    if (replica == null) {
      throw new IllegalStateException("not routed: " + reason);
    }
  }

  @Override
  public String toString() {
    return "RoutingDecision{" + explain() + '}';
  }
}
