package io.affinityrouter.core.lifecycle;

import io.affinityrouter.core.engine.EngineActionResult;
import io.affinityrouter.core.engine.FleetView;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletionStage;

/**
 * Carries out the lifecycle's sleep and wake actions on an engine: a
 * {@link io.affinityrouter.core.engine.FleetView}'s sleep mode
 * ({@link #of(io.affinityrouter.core.engine.FleetView)}), or a gateway's own. The stages never complete
 * exceptionally; a failure is {@link Outcome#FAILED}.
 */
public interface ModelActuator {

  /** What an action came to. */
  enum Outcome {
    /** The engine took it. */
    DONE,
    /** It may work later: no answer, or an error answer. Retried with backoff. */
    FAILED,
    /** The engine cannot do it (no sleep mode, unknown replica). Not retried. */
    UNSUPPORTED
  }

  /** Puts {@code model} on {@code replicaId} to sleep at {@code level} (1 or 2). */
  CompletionStage<Outcome> sleep(String replicaId, String model, int level);

  /** Wakes {@code model} on {@code replicaId}. */
  CompletionStage<Outcome> wake(String replicaId, String model);

  /**
   * The actuator of a fleet view's sleep mode: vLLM runs one model per engine, so a sleep puts the
   * replica's engine to sleep ({@code POST /sleep?level=...&mode=wait}: the requests in flight
   * finish first) and a wake wakes all of it ({@code POST /wake_up}). An engine without sleep mode
   * is {@link Outcome#UNSUPPORTED}; no answer, an error answer, a replica the view does not (yet)
   * know and a closed view are {@link Outcome#FAILED}.
   */
  static ModelActuator of(FleetView fleet) {
    Objects.requireNonNull(fleet, "fleet");
    return new ModelActuator() {
      @Override
      public CompletionStage<Outcome> sleep(String replicaId, String model, int level) {
        return fleet.sleep(replicaId, level, FleetView.SleepMode.WAIT)
            .thenApply(ModelActuator::outcome);
      }

      @Override
      public CompletionStage<Outcome> wake(String replicaId, String model) {
        return fleet.wakeUp(replicaId, List.of()).thenApply(ModelActuator::outcome);
      }

      @Override
      public String toString() {
        return "ModelActuator.of(" + fleet + ")";
      }
    };
  }

  private static Outcome outcome(EngineActionResult result) {
    switch (result.status()) {
      case DONE:
        return Outcome.DONE;
      case UNSUPPORTED:
        return Outcome.UNSUPPORTED;
      default:
        return Outcome.FAILED;
    }
  }
}
