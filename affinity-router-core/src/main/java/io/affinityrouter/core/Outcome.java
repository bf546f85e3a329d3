package io.affinityrouter.core;

import io.affinityrouter.RoutingDecision;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/** What a stage of {@code select} returns: a finished decision, or one the store still owes. */
sealed interface Outcome {
  /**
   * A decision made now. Each selection reuses one (a decision allocates nothing to say it is
   * done), so it is read at once, before the thread's next decision.
   */
  final class Decided implements Outcome {
    private @Nullable RoutingDecision decision;

    Decided set(RoutingDecision decision) {
      this.decision = decision;
      return this;
    }

    RoutingDecision decision() {
      return Objects.requireNonNull(decision, "set");
    }
  }

  /** A decision that completes when the binding store answers (or times out). */
  record Pending(CompletionStage<RoutingDecision> stage) implements Outcome {}

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
