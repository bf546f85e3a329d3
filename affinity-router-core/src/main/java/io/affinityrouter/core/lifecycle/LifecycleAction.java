package io.affinityrouter.core.lifecycle;

import io.affinityrouter.internal.Checks;
import java.util.Objects;

/**
 * One sleep or wake the lifecycle decided: which model on which replica, and why.
 *
 * @param kind sleep or wake
 * @param replicaId the replica whose copy of the model it acts on
 * @param model the model
 * @param reason why
 * @param sleepLevel the sleep level of a sleep (the claim's), 0 for a wake
 */
public record LifecycleAction(Kind kind, String replicaId, String model, Reason reason,
    int sleepLevel) {

  /** Sleep or wake. */
  public enum Kind {
    /** Put the copy to sleep: its GPU memory goes back to the replica's other models. */
    SLEEP,
    /** Wake the copy. */
    WAKE
  }

  /** Why the lifecycle acts. */
  public enum Reason {
    /** A copy went without a request for its claim's idle time, above the model's minimum. */
    IDLE,
    /** The model has more awake copies than its claim's maximum. */
    MAXIMUM,
    /** The model has fewer awake copies than its claim's minimum. */
    MINIMUM,
    /** Requests for a model with no awake copy (the router answered {@code MODEL_WAKING}). */
    DEMAND,
    /** Requests queue on half or more of the model's awake copies, for a sustained while. */
    PRESSURE,
    /** A sleep that frees memory on a replica for a wake that does not fit otherwise. */
    MAKE_ROOM
  }

  /** Checks the values. */
  public LifecycleAction {
    Objects.requireNonNull(kind, "kind");
    Checks.notBlank(replicaId, "replicaId");
    Checks.notBlank(model, "model");
    Objects.requireNonNull(reason, "reason");
    if (kind == Kind.SLEEP ? sleepLevel != 1 && sleepLevel != 2 : sleepLevel != 0) {
      throw new IllegalArgumentException("sleepLevel: " + sleepLevel + " (expected: "
          + (kind == Kind.SLEEP ? "1 or 2" : "0 for a wake") + ")");
    }
  }

  @Override
  public String toString() {
    return kind + " " + model + " on " + replicaId + " (" + reason
        + (kind == Kind.SLEEP ? ", level " + sleepLevel : "") + ")";
  }
}
