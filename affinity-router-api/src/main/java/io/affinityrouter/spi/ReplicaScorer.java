package io.affinityrouter.spi;

import io.affinityrouter.Replica;
import io.affinityrouter.RoutingRequest;

/**
 * An extra term in a replica's score. The router ranks replicas by estimated time to first token in
 * seconds (lower is better); a scorer's term takes {@code weightSeconds() × score} off it, so a scorer
 * returning {@code 1} for a replica makes it look {@code weightSeconds()} faster.
 *
 * <p>Called on the routing thread for every eligible replica of every request: it must be fast,
 * thread-safe, must not block, and should not allocate. An exception or a score outside 0..1 (or NaN)
 * counts as 0 for that replica and is reported to {@link RoutingListener#onPluginFailure}.
 */
public interface ReplicaScorer {

  /** A short name for explanations and metrics. */
  String name();

  /** What a score of 1 is worth, in seconds of estimated time to first token; {@code >= 0}. */
  double weightSeconds();

  /** The replica's score for the request, in 0..1, higher is better. */
  double score(RoutingRequest request, Replica replica);
}
