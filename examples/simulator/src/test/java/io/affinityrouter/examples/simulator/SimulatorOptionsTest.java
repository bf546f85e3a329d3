package io.affinityrouter.examples.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.examples.simulator.engine.SimulationConfig;
import io.affinityrouter.examples.simulator.fleet.EngineConfig;
import io.affinityrouter.examples.simulator.strategy.StrategyRegistry;
import io.affinityrouter.examples.simulator.workload.AgentSessionGenerator;
import io.affinityrouter.examples.simulator.workload.Workload;
import java.util.List;
import org.junit.jupiter.api.Test;

class SimulatorOptionsTest {
  @Test
  void oneSeedByDefaultAndWithSeed() {
    assertThat(SimulatorOptions.parse(new String[0]).seeds()).containsExactly(42L);
    SimulatorOptions o = SimulatorOptions.parse(new String[] {"--seed", "7"});
    assertThat(o.seed()).isEqualTo(7);
    assertThat(o.seeds()).containsExactly(7L);
  }

  @Test
  void severalGatewaysAddTheMultiGatewayConfiguration() {
    StrategyRegistry scaleOut =
        Simulator.registry(SimulatorOptions.parse(new String[] {"--scenario", "scale-out"}));
    assertThat(scaleOut.all()).extracting(StrategyRegistry.Entry::name)
        .contains("affinity-router", "affinity-router-noexch");
    assertThat(scaleOut.isRouter("affinity-router-noexch")).isTrue();
    assertThat(scaleOut.isPeer("affinity-router-noexch")).isFalse();
    assertThat(Simulator.registry(SimulatorOptions.parse(new String[0])).all())
        .extracting(StrategyRegistry.Entry::name)
        .contains("affinity-router").doesNotContain("affinity-router-noexch");
  }

  @Test
  void theFrontDoorSpreadsRequestsByDefaultOrHashesSessions() {
    assertThat(SimulatorOptions.parse(new String[0]).front())
        .isEqualTo(SimulationConfig.Front.REQUEST);
    SimulatorOptions o = SimulatorOptions.parse(new String[] {"--gateways", "4", "--front",
        "session", "--seeds", "1-3"});
    assertThat(o.front()).isEqualTo(SimulationConfig.Front.SESSION);
    assertThat(o.withSeed(2).front()).isEqualTo(SimulationConfig.Front.SESSION);
    // every run's fleet, capacity mode's too, is built by Simulator.config
    Workload w = AgentSessionGenerator.generate(
        AgentSessionGenerator.Config.defaults(1).withSessions(2), "agents");
    SimulationConfig c = Simulator.config(o.withSeed(2), w, EngineConfig.defaults());
    assertThat(c.front()).isEqualTo(SimulationConfig.Front.SESSION);
    assertThat(c.gateways()).isEqualTo(4);
    assertThat(c.withEngine(EngineConfig.defaults()).front())
        .isEqualTo(SimulationConfig.Front.SESSION);
    assertThat(SimulationConfig.steady(2, 2, 1).front()).isEqualTo(SimulationConfig.Front.REQUEST);
    assertThat(SimulatorOptions.parse(new String[] {"--front", "request"}).front())
        .isEqualTo(SimulationConfig.Front.REQUEST);
    assertThatThrownBy(() -> SimulatorOptions.parse(new String[] {"--front", "x"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--front: x (expected: request or session)");
    assertThatThrownBy(() -> SimulatorOptions.parse(new String[] {"--front"}))
        .hasMessage("--front: no value (expected: --name value)");
    assertThatThrownBy(() -> SimulatorOptions.parse(new String[] {"--fronts", "session"}))
        .hasMessageContaining("--front)");
  }

  @Test
  void seedsTakeARangeOrAList() {
    SimulatorOptions range = SimulatorOptions.parse(new String[] {"--seeds", "3-6"});
    assertThat(range.seeds()).containsExactly(3L, 4L, 5L, 6L);
    assertThat(range.seed()).isEqualTo(3);
    assertThat(SimulatorOptions.parse(new String[] {"--seeds", "9,2,5"}).seeds())
        .containsExactly(9L, 2L, 5L);
    assertThat(range.withSeed(5).seeds()).containsExactly(5L);
    assertThat(range.withSeed(5).seed()).isEqualTo(5);
  }

  @Test
  void badSeedsAreRejectedWithTheReason() {
    for (List<String> args : List.of(List.of("--seeds", "6-3"), List.of("--seeds", "1,2,1"),
        List.of("--seeds", "a-b"), List.of("--seeds", "1-5000"),
        List.of("--seed", "1", "--seeds", "1-2"), List.of("--seed", "x"))) {
      assertThatThrownBy(() -> SimulatorOptions.parse(args.toArray(String[]::new)))
          .as(args.toString())
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("expected:");
    }
  }

  @Test
  void capacityModeTakesAFlagSlosTracesAndRates() {
    SimulatorOptions o = SimulatorOptions.parse(new String[] {"--capacity", "--trace",
        "/data/mine.jsonl", "--trace", "other.jsonl", "--threads", "3"});
    assertThat(o.capacity()).isTrue();
    assertThat(o.allWorkloads()).containsExactly("mine", "other");
    assertThat(o.traceFile("mine")).hasToString("/data/mine.jsonl");
    assertThat(o.sloP90Millis("mine")).isEqualTo(2000);
    assertThat(o.threads()).isEqualTo(3);
    assertThat(o.agentSessions()).isZero(); // each preset's own

    SimulatorOptions d = SimulatorOptions.parse(new String[] {"--workloads", "agents,ragpulse",
        "--trace", "t.jsonl", "--rate", "12.5"});
    assertThat(d.capacity()).isFalse();
    assertThat(d.allWorkloads()).containsExactly("agents", "ragpulse", "t");
    assertThat(d.sloP90Millis("agents")).isEqualTo(300);
    assertThat(d.sloP90Millis("ragpulse")).isEqualTo(2000);
    assertThat(d.rate()).isEqualTo(12.5);
    assertThat(d.agentSessions()).isZero();
    assertThat(SimulatorOptions.parse(new String[] {"--slo-p90-ms", "500"}).sloP90Millis("agents"))
        .isEqualTo(500);
    // capacity mode runs 3 seeds from --seed on; --seeds N is a count there, a range or list too
    assertThat(o.seeds()).containsExactly(42L, 43L, 44L);
    assertThat(o.spreadTies()).isTrue();
    assertThat(SimulatorOptions.parse(new String[] {"--capacity", "--seed", "7", "--seeds", "5"})
        .seeds()).containsExactly(7L, 8L, 9L, 10L, 11L);
    assertThat(SimulatorOptions.parse(new String[] {"--seeds", "2", "--capacity"}).seeds())
        .containsExactly(42L, 43L);
    assertThat(SimulatorOptions.parse(new String[] {"--capacity", "--seeds", "1-3"}).seeds())
        .containsExactly(1L, 2L, 3L);
    assertThat(SimulatorOptions.parse(new String[] {"--seeds", "5"}).seeds()).containsExactly(5L);
    assertThat(SimulatorOptions.parse(new String[] {"--no-spread", "--capacity"}).spreadTies())
        .isFalse();
    assertThatThrownBy(() -> SimulatorOptions.parse(new String[] {"--capacity", "--seeds", "0"}))
        .hasMessage("--seeds: 0 (expected: > 0)");
    assertThatThrownBy(() -> SimulatorOptions.parse(new String[] {"--slo-p90-ms", "0"}))
        .hasMessage("--slo-p90-ms: 0 (expected: > 0)");
  }
}
