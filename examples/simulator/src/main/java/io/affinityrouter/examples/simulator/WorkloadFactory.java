package io.affinityrouter.examples.simulator;

import io.affinityrouter.examples.simulator.engine.LoadCalibration;
import io.affinityrouter.examples.simulator.fleet.EngineConfig;
import io.affinityrouter.examples.simulator.workload.AgentSessionGenerator;
import io.affinityrouter.examples.simulator.workload.MooncakeTraceReader;
import io.affinityrouter.examples.simulator.workload.RagPulseTraceReader;
import io.affinityrouter.examples.simulator.workload.Workload;
import java.util.function.Consumer;

/**
 * Builds a named workload and scales its arrival rate to the target load: the replica's capacity is
 * measured on the workload itself ({@link LoadCalibration}), then trace arrivals are compressed, or
 * agent sessions started, so that requests arrive at {@code load × replicas × capacity} per second.
 * Stateless and thread-safe.
 */
public final class WorkloadFactory {
  /** Requests of the workload queued on one replica to measure its capacity. */
  static final int CALIBRATION_SAMPLE = 300;

  private WorkloadFactory() {}

  /**
   * Builds the workload.
   *
   * @throws IllegalArgumentException if the name is unknown
   */
  public static Workload build(String name, SimulatorOptions o, EngineConfig engine, int replicas,
      Consumer<String> log) {
    Workload raw = switch (name) {
      case "mooncake-conversation" -> MooncakeTraceReader.read(
          o.traces().resolve("mooncake_conversation_trace.jsonl"), name, o.limit());
      case "mooncake-synthetic" -> MooncakeTraceReader.read(
          o.traces().resolve("mooncake_synthetic_trace.jsonl"), name, o.limit());
      case "ragpulse" -> RagPulseTraceReader.read(o.traces().resolve("ragpulse"), name, o.limit());
      case "agents", "agents-hot" -> AgentSessionGenerator.generate(agentConfig(name, o, 1.0), name);
      default -> throw new IllegalArgumentException("workload: " + name + " (expected: "
          + "mooncake-conversation, mooncake-synthetic, ragpulse, agents or agents-hot)");
    };
    double capacity = LoadCalibration.requestsPerSecond(raw, engine, CALIBRATION_SAMPLE);
    double target = o.load() * replicas * capacity;
    Workload scaled;
    if (name.startsWith("agents")) {
      double meanTurns = (double) raw.size() / raw.heads().size();
      scaled = AgentSessionGenerator.generate(agentConfig(name, o, target / meanTurns), name);
    } else {
      double natural = raw.size() / Math.max(1e-9, raw.spanNanos() / 1e9);
      scaled = raw.compressed(target / natural);
    }
    log.accept(String.format(java.util.Locale.ROOT,
        "workload %s: %d requests; one replica serves %.2f req/s (measured); "
            + "arrivals %.2f req/s = load %.2f x %d replicas; first arrivals span %.0f s",
        name, scaled.size(), capacity, target, o.load(), replicas, scaled.spanNanos() / 1e9));
    return scaled;
  }

  private static AgentSessionGenerator.Config agentConfig(String name, SimulatorOptions o,
      double sessionsPerSecond) {
    AgentSessionGenerator.Config d = AgentSessionGenerator.Config.defaults(o.seed());
    AgentSessionGenerator.Config c = new AgentSessionGenerator.Config(o.agentSessions(),
        sessionsPerSecond, d.kinds(), name.equals("agents-hot") ? 0.6 : 0.0,
        d.systemPromptTokens(), d.taskTokens(), d.minTurns(), d.maxTurns(), d.minToolTokens(),
        d.maxToolTokens(), d.minAnswerTokens(), d.maxAnswerTokens(), d.meanThinkMillis(),
        d.seed());
    return c;
  }
}
