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
 * <p>Built only through the static factories (as gRPC's {@code PickResult}). Immutable and
 * thread-safe; the lease it carries is thread-safe too.
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
   * A routed decision.
   *
   * @param reason a routed reason ({@link RoutingReason#isRouted()})
   * @param replica the chosen replica
   * @param lease the lease already counting the request on {@code replica}
   * @param scores the chosen replica's score breakdown
   * @param matchedBlocks prompt blocks found in the chosen replica's cached prefix
   * @param promptBlocks blocks the prompt was hashed into
   * @param generation the session binding's generation, {@code 0} without a binding
   * @param degraded whether the binding store was bypassed
   * @param repinCause why the session moved, for {@link RoutingReason#SESSION_REPINNED}; else null
   * @param previousReplicaId the replica the session left, for repins; else null
   * @throws IllegalArgumentException if the reason is not a routed one, or a repin lacks its cause
   */
  public static RoutingDecision routed(RoutingReason reason, Replica replica, RequestLease lease,
      ScoreBreakdown scores, int matchedBlocks, int promptBlocks, long generation,
      boolean degraded, @Nullable RepinCause repinCause, @Nullable String previousReplicaId) {
    Objects.requireNonNull(reason, "reason");
    if (!reason.isRouted()) {
      throw new IllegalArgumentException("reason: " + reason + " (expected: a routed reason)");
    }
    if ((reason == RoutingReason.SESSION_REPINNED) != (repinCause != null)) {
      throw new IllegalArgumentException(
          "repinCause: " + repinCause + " (expected: set exactly for SESSION_REPINNED)");
    }
    return new RoutingDecision(reason, Objects.requireNonNull(replica, "replica"),
        Objects.requireNonNull(lease, "lease"), Objects.requireNonNull(scores, "scores"), matchedBlocks,
        promptBlocks, generation, degraded, repinCause, previousReplicaId, Duration.ZERO, null);
  }

  /**
   * A decision that routes nothing.
   *
   * @param reason a not-routed reason
   * @param retryAfter when the caller may try again (the gateway's {@code Retry-After})
   * @param wokenReplicaId for {@link RoutingReason#MODEL_WAKING}, the replica asked to wake; else
   *     null
   * @throws IllegalArgumentException if the reason is a routed one
   */
  public static RoutingDecision notRouted(RoutingReason reason, Duration retryAfter,
      @Nullable String wokenReplicaId) {
    Objects.requireNonNull(reason, "reason");
    if (reason.isRouted()) {
      throw new IllegalArgumentException("reason: " + reason + " (expected: a not-routed reason)");
    }
    return new RoutingDecision(reason, null, null, ScoreBreakdown.NONE, 0, 0, 0, false, null, null,
        Objects.requireNonNull(retryAfter, "retryAfter"), wokenReplicaId);
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
    } else if (previousReplicaId != null) {
      sb.append(" (was ").append(previousReplicaId).append(')');
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
