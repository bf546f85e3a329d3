package io.affinityrouter.examples.simulator.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.examples.simulator.fleet.EngineConfig;
import io.affinityrouter.examples.simulator.workload.AgentSessionGenerator;
import io.affinityrouter.examples.simulator.workload.MooncakeTraceReader;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import io.affinityrouter.examples.simulator.workload.Traces;
import io.affinityrouter.examples.simulator.workload.Workload;
import java.util.List;
import org.junit.jupiter.api.Test;

class LoadCalibrationTest {
  @Test
  void aTraceIsSampledFromItsMiddleNotItsStart() {
    Workload w = MooncakeTraceReader.read(
        Traces.FOLDER.resolve("mooncake_conversation_trace.jsonl"), "conv", 3000);
    List<SimRequest> sample = LoadCalibration.sampleHeads(w, 1000);
    assertThat(sample).hasSize(1000);
    assertThat(sample.get(0)).isSameAs(w.heads().get(1000));
    assertThat(sample.get(999)).isSameAs(w.heads().get(1999));
  }

  @Test
  void sessionsAreSampledAcrossTheWorkloadAndWideEnoughForABusyReplica() {
    Workload w = AgentSessionGenerator.generate(
        AgentSessionGenerator.Config.agentsLong(42).withSessions(400), "long");
    List<SimRequest> sample = LoadCalibration.sampleHeads(w, 300);
    assertThat(sample).hasSize(LoadCalibration.MIN_CHAINS); // 300 turns are fewer than 64 chains
    assertThat(sample.get(0)).isSameAs(w.heads().get(0));
    assertThat(sample.get(LoadCalibration.MIN_CHAINS - 1))
        .isSameAs(w.heads().get((LoadCalibration.MIN_CHAINS - 1) * 400 / LoadCalibration.MIN_CHAINS));
  }

  @Test
  void theReplicasOwnKvCacheBoundsWhatItServes() {
    // 64 long sessions hold about 3M tokens at once: more than one replica's 1.08M, so evicted
    // contexts are recomputed; with ten times the KV they are not.
    Workload w = AgentSessionGenerator.generate(
        AgentSessionGenerator.Config.agentsLong(42).withSessions(64), "long");
    EngineConfig engine = EngineConfig.defaults();
    double finite = LoadCalibration.requestsPerSecond(w, engine, 300);
    double large = LoadCalibration.requestsPerSecond(w,
        engine.withKvBlocks(10 * engine.kvBlocks()), 300);
    assertThat(finite).isPositive().isLessThan(0.8 * large);
  }

  @Test
  void aSampleMustBePositive() {
    Workload w = AgentSessionGenerator.generate(
        AgentSessionGenerator.Config.agentsLong(42).withSessions(2), "long");
    assertThatThrownBy(() -> LoadCalibration.requestsPerSecond(w, EngineConfig.defaults(), 0))
        .hasMessage("sample: 0 (expected: > 0)");
  }
}
