package io.affinityrouter.core.lifecycle;

import java.util.List;

/**
 * A snapshot of a {@link ModelLifecycle}: whether this gateway acts, each claimed model's copies,
 * the actions under way, and counts of the actions carried out since the lifecycle started.
 *
 * @param leader whether this gateway held the lease at its last round (only the leader acts)
 * @param token the fencing token of that holding, 0 when not the leader
 * @param models each claimed model, in claim order
 * @param inFlight the actions started and not yet answered
 * @param actionsDone actions the engines took
 * @param actionsFailed actions that failed (each retried with backoff)
 * @param actionsUnsupported actions an engine cannot do (not retried)
 */
public record LifecycleState(boolean leader, long token, List<ModelStatus> models,
    List<LifecycleAction> inFlight, long actionsDone, long actionsFailed,
    long actionsUnsupported) {

  /** Copies the lists. */
  public LifecycleState {
    models = List.copyOf(models);
    inFlight = List.copyOf(inFlight);
  }

  /**
   * One claimed model as the lifecycle last saw it.
   *
   * @param model the model
   * @param awake copies awake (active or loading), counting wakes that took effect and sleeps not
   *     yet answered
   * @param asleep copies asleep
   * @param waking wakes under way
   * @param minAwake the claim's minimum
   * @param maxAwake the claim's maximum
   * @param idleSeconds seconds since the model's last request, as this gateway saw it (or since the
   *     lifecycle started, if none)
   */
  public record ModelStatus(String model, int awake, int asleep, int waking, int minAwake,
      int maxAwake, double idleSeconds) {}
}
