package io.affinityrouter.core;

import io.affinityrouter.RoutingDecision;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/** What a stage of {@code select} returns: a finished decision, or one the store still owes. */
sealed interface Outcome {
  /** A decision made now, on the caller's thread. */
  record Decided(RoutingDecision decision) implements Outcome {}

  /** A decision that completes when the binding store answers (or times out). */
  record Pending(CompletionStage<RoutingDecision> stage) implements Outcome {}

  static Outcome of(RoutingDecision decision) {
    return new Decided(decision);
  }

  /** This outcome as a stage (completed when decided). */
  default CompletionStage<RoutingDecision> stage() {
    return this instanceof Decided d
        ? CompletableFuture.completedFuture(d.decision())
        : ((Pending) this).stage();
  }

  /** The decision, waiting for a pending one. */
  default RoutingDecision join() {
    return this instanceof Decided d
        ? d.decision()
        : ((Pending) this).stage().toCompletableFuture().join();
  }
}
