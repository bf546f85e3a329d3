package io.affinityrouter.examples.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.examples.simulator.fleet.EngineConfig;
import io.affinityrouter.examples.simulator.workload.AgentSessionGenerator;
import io.affinityrouter.examples.simulator.workload.Workload;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkloadFactoryTest {
  private static final EngineConfig ENGINE = EngineConfig.defaults();

  private static Workload build(String name, String args) {
    SimulatorOptions o = SimulatorOptions.parse(new String[] {args});
    return WorkloadFactory.build(name, o, ENGINE, o.replicas(), s -> { });
  }

  @Test
  void theLongPresetsTakeTheirOwnSessionCountUnlessOneIsGiven() {
    assertThat(build("agents-long", "").heads()).hasSize(AgentSessionGenerator.LONG_SESSIONS);
    assertThat(build("agents-long", "--agent-sessions 30").heads()).hasSize(30);
    assertThat(build("agents-long-pressure", "--agent-sessions 20").heads()).hasSize(20);
    assertThat(build("agents", "").heads()).hasSize(800);
    assertThat(build("agents", "--capacity").heads())
        .hasSize(SimulatorOptions.CAPACITY_AGENT_SESSIONS);
    assertThat(build("agents-long", "--capacity").heads())
        .hasSize(AgentSessionGenerator.LONG_SESSIONS);
  }

  @Test
  void theHotLongPresetPutsMostSessionsOnOnePromptFamilyAndThePlainOneDoesNot() {
    // a session's first segment is its kind's system prompt
    double hot = shareOnKindZero(build("agents-long-hot", ""));
    double plain = shareOnKindZero(build("agents-long", ""));
    assertThat(hot).isBetween(0.6, 0.72); // 60% put on it, plus its draw among the rest
    assertThat(plain).isBetween(0.06, 0.2); // one kind of 8
  }

  private static double shareOnKindZero(Workload w) {
    long kindZero = w.heads().stream().filter(h -> h.segmentIds()[0] == (10L << 40)).count();
    return (double) kindZero / w.heads().size();
  }

  @Test
  void readsAUsersTraceFileAsAWorkloadNamedAfterIt(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("agents_recorded.jsonl");
    Files.writeString(file, String.join("\n",
        "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 1],"
            + " \"session_id\": \"a\"}",
        "{\"timestamp\": 1000, \"input_length\": 1100, \"output_length\": 5,"
            + " \"hash_ids\": [0, 1, 2], \"session_id\": \"a\"}",
        "{\"timestamp\": 2000, \"input_length\": 700, \"output_length\": 5, \"hash_ids\": [9, 8]}"));
    // a file whose name starts like an agent preset is still read as a trace
    Workload w = build("agents_recorded", "--replicas 2 --trace " + file);
    assertThat(w.name()).isEqualTo("agents_recorded");
    assertThat(w.size()).isEqualTo(3);
    assertThat(w.allRequests().get(1).session()).isEqualTo("a");
  }

  @Test
  void anUnknownNameListsTheWorkloads() {
    assertThatThrownBy(() -> build("agents-short", ""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("agents-long-hot, agents-long-pressure or a --trace file's name");
  }
}
