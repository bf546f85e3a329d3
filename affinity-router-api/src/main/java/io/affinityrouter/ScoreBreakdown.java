package io.affinityrouter;

/**
 * How the chosen replica scored, term by term. The router estimates a time to first token for each
 * eligible replica, in seconds, and prefers the lowest:
 *
 * <pre>
 *   estimatedTtft = queueSeconds + prefillSeconds - pluginSeconds
 * </pre>
 *
 * where {@code prefillSeconds} covers only the prompt tokens not already cached there (prefix
 * locality, {@link #cachedFraction()}), {@code queueSeconds} the work already committed to the replica
 * (load in tokens), and {@code pluginSeconds} what {@link io.affinityrouter.spi.ReplicaScorer}
 * plugins added. {@link #affinity()} says whether the replica was the session's bound replica.
 *
 * @param affinity whether the replica was the session's bound replica when the decision was made
 * @param cachedFraction the fraction of the prompt's tokens taken as cached on the replica, 0..1
 * @param prefillSeconds estimated seconds to prefill the uncached part of the prompt there
 * @param queueSeconds estimated seconds of work already committed to the replica ahead of it
 * @param pluginSeconds the seconds taken off by plugin scorers (0 without plugins)
 * @param estimatedTtftSeconds the total the replica was ranked by
 */
public record ScoreBreakdown(
    boolean affinity,
    double cachedFraction,
    double prefillSeconds,
    double queueSeconds,
    double pluginSeconds,
    double estimatedTtftSeconds) {

  /** The breakdown of decisions that scored nothing (not routed, or degraded fallback). */
  public static final ScoreBreakdown NONE = new ScoreBreakdown(false, 0, 0, 0, 0, 0);
}
