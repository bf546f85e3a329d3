package io.affinityrouter.examples.simulator.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.examples.simulator.fleet.EngineConfig;
import io.affinityrouter.examples.simulator.strategy.StrategyRegistry;
import io.affinityrouter.examples.simulator.workload.MooncakeTraceReader;
import io.affinityrouter.examples.simulator.workload.Traces;
import io.affinityrouter.examples.simulator.workload.Workload;
import java.util.List;
import org.junit.jupiter.api.Test;

class LlmdFlowControlSimulationTest {
  private static final StrategyRegistry REGISTRY = StrategyRegistry.standard();
  private static final int REPLICAS = 2;

  /** The first 400 requests of the Mooncake conversation trace at twice what two replicas serve. */
  private static Workload overload() {
    Workload raw = MooncakeTraceReader.read(
        Traces.FOLDER.resolve("mooncake_conversation_trace.jsonl"), "mooncake", 400);
    double capacity = LoadCalibration.requestsPerSecond(raw, EngineConfig.defaults(), 200);
    double natural = raw.size() / (raw.spanNanos() / 1e9);
    return raw.compressed(2.0 * REPLICAS * capacity / natural);
  }

  private static RunResult run(Workload w, String strategy) {
    return Simulation.run(w, REGISTRY.select(List.of(strategy)).get(0),
        SimulationConfig.steady(REPLICAS, 2, 3), line -> { });
  }

  @Test
  void onAnOverloadedFleetFlowControlHoldsRequestsAndAllComplete() {
    Workload w = overload();
    RunResult held = run(w, "llm-d-flow-control");
    RunResult plain = run(w, "llm-d");
    assertThat(held.completed()).isEqualTo(w.size());
    assertThat(held.heldRequests()).isPositive();
    assertThat(held.sampleNanos()).as("the scrape interval").isEqualTo(50_000_000L);
    // without flow control the gateway sends every request straight to an engine
    assertThat(plain.completed()).isEqualTo(w.size());
    assertThat(plain.heldRequests()).isZero();
  }
}
