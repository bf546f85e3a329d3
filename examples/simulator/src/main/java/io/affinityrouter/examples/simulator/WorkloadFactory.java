package io.affinityrouter.examples.simulator;

import io.affinityrouter.examples.simulator.engine.LoadCalibration;
import io.affinityrouter.examples.simulator.fleet.EngineConfig;
import io.affinityrouter.examples.simulator.workload.AgentSessionGenerator;
import io.affinityrouter.examples.simulator.workload.MooncakeTraceReader;
import io.affinityrouter.examples.simulator.workload.RagPulseTraceReader;
import io.affinityrouter.examples.simulator.workload.Workload;
import java.nio.file.Path;
import java.util.function.Consumer;

/**
 * Builds a named workload and scales its arrival rate to the target load: the replica's capacity is
 * measured on the workload itself ({@link LoadCalibration}), then trace arrivals are compressed, or
 * agent sessions started, so that requests arrive at {@code load × replicas × capacity} per second.
 * A name ending in {@code .jsonl} is a Mooncake-format file of the user's, read in place as a trace
 * named after the file ({@link MooncakeTraceReader#read(Path, int)}). Stateless and thread-safe.
 */
public final class WorkloadFactory {
  /** Requests of the workload queued on one replica to measure its capacity. */
  public static final int CALIBRATION_SAMPLE = 1000;

  private WorkloadFactory() {}

  /**
   * Builds the workload at the target rate: {@code --rate} requests per second if given, else
   * {@code load × replicas ×} one replica's measured capacity ({@link LoadCalibration}).
   *
   * @throws IllegalArgumentException if the name is unknown
   */
  public static Workload build(String name, SimulatorOptions o, EngineConfig engine, int replicas,
      Consumer<String> log) {
    Workload raw = raw(name, o);
    String ties = tiesWarning(name, o);
    if (ties != null) {
      log.accept(ties);
    }
    double target;
    String how;
    if (o.rate() > 0) {
      target = o.rate();
      how = "--rate";
    } else {
      double capacity = LoadCalibration.requestsPerSecond(raw, engine, CALIBRATION_SAMPLE);
      target = o.load() * replicas * capacity;
      how = String.format(java.util.Locale.ROOT,
          "load %.2f x %d replicas x %.2f req/s (one replica, measured)", o.load(), replicas,
          capacity);
    }
    Workload scaled = atRate(name, raw, o, target);
    log.accept(String.format(java.util.Locale.ROOT,
        "workload %s: %d requests; arrivals %.2f req/s (%s); first arrivals span %.0f s",
        name, scaled.size(), target, how, scaled.spanNanos() / 1e9));
    return scaled;
  }

  /**
   * The workload as read or generated, at its natural rate (agent sessions: one per second); a
   * trace's requests that share a timestamp spread over its tick unless {@code --no-spread}
   * ({@link Workload#spreadTies}, seeded by {@code --seed}).
   *
   * @throws IllegalArgumentException if the name is unknown
   */
  public static Workload raw(String name, SimulatorOptions o) {
    Workload w = read(name, o);
    return o.spreadTies() && !isAgents(name, o) ? w.spreadTies(o.seed()) : w;
  }

  /**
   * A line for the log when a trace logs far fewer distinct arrival times than requests (its
   * requests come in ticks), or null.
   */
  public static String tiesWarning(String name, SimulatorOptions o) {
    if (isAgents(name, o)) {
      return null;
    }
    Workload.Ties t = read(name, o).ties();
    if (!t.coarse()) {
      return null;
    }
    return String.format(java.util.Locale.ROOT, "warning: %s has %,d requests at %,d distinct "
        + "timestamps (tick %.0f ms): %s", name, t.requests(), t.distinct(), t.tickNanos() / 1e6,
        o.spreadTies() ? "requests sharing a timestamp arrive spread uniformly over the tick "
            + "(seeded; --no-spread keeps them simultaneous)"
            : "requests sharing a timestamp arrive at the same instant (--no-spread)");
  }

  private static Workload read(String name, SimulatorOptions o) {
    java.nio.file.Path file = o.traceFile(name);
    if (file != null) {
      return MooncakeTraceReader.read(file, name, o.limit());
    }
    return switch (name) {
      case "mooncake-conversation" -> MooncakeTraceReader.read(
          o.traces().resolve("mooncake_conversation_trace.jsonl"), name, o.limit());
      case "mooncake-synthetic" -> MooncakeTraceReader.read(
          o.traces().resolve("mooncake_synthetic_trace.jsonl"), name, o.limit());
      case "ragpulse" -> RagPulseTraceReader.read(o.traces().resolve("ragpulse"), name, o.limit());
      case "agents", "agents-hot", "agents-long", "agents-long-hot", "agents-long-pressure" ->
          AgentSessionGenerator.generate(agentConfig(name, o, 1.0), name);
      default -> throw new IllegalArgumentException("workload: " + name + " (expected: "
          + "mooncake-conversation, mooncake-synthetic, ragpulse, agents, agents-hot, agents-long,"
          + " agents-long-hot, agents-long-pressure or a --trace file's name)");
    };
  }

  /**
   * {@code raw} with requests arriving at {@code requestsPerSecond}: a trace's arrivals compressed
   * (or stretched), agent sessions started at that rate over their mean turns per session (later
   * turns follow their think times, closed loop).
   *
   * @throws IllegalArgumentException if the rate is not positive and finite
   */
  public static Workload atRate(String name, Workload raw, SimulatorOptions o,
      double requestsPerSecond) {
    if (!(requestsPerSecond > 0) || Double.isInfinite(requestsPerSecond)) {
      throw new IllegalArgumentException("requestsPerSecond: " + requestsPerSecond
          + " (expected: > 0 and finite)");
    }
    if (isAgents(name, o)) {
      double meanTurns = (double) raw.size() / raw.heads().size();
      return AgentSessionGenerator.generate(agentConfig(name, o, requestsPerSecond / meanTurns),
          name);
    }
    double natural = raw.size() / Math.max(1e-9, raw.spanNanos() / 1e9);
    return raw.compressed(requestsPerSecond / natural);
  }

  private static boolean isAgents(String name, SimulatorOptions o) {
    return o.traceFile(name) == null && name.startsWith("agents");
  }

  /**
   * The agent preset's options at a session start rate; {@code --agent-sessions} overrides the
   * preset's session count when given.
   */
  private static AgentSessionGenerator.Config agentConfig(String name, SimulatorOptions o,
      double sessionsPerSecond) {
    AgentSessionGenerator.Config c = switch (name) {
      case "agents-hot" -> AgentSessionGenerator.Config.defaults(o.seed()).withHotShare(0.6);
      case "agents-long" -> AgentSessionGenerator.Config.agentsLong(o.seed()).withHotShare(0);
      case "agents-long-hot" -> AgentSessionGenerator.Config.agentsLong(o.seed());
      case "agents-long-pressure" -> AgentSessionGenerator.Config.agentsLongPressure(o.seed());
      default -> AgentSessionGenerator.Config.defaults(o.seed());
    };
    if (o.agentSessions() > 0) {
      c = c.withSessions(o.agentSessions());
    } else if (o.capacity() && (name.equals("agents") || name.equals("agents-hot"))) {
      c = c.withSessions(SimulatorOptions.CAPACITY_AGENT_SESSIONS);
    }
    return c.withSessionsPerSecond(sessionsPerSecond);
  }
}
