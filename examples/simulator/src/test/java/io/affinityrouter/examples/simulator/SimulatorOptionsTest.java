package io.affinityrouter.examples.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.examples.simulator.strategy.StrategyRegistry;
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
        .contains("affinity-router", "affinity-router-exch");
    assertThat(scaleOut.isRouter("affinity-router-exch")).isTrue();
    assertThat(scaleOut.isPeer("affinity-router-exch")).isFalse();
    assertThat(Simulator.registry(SimulatorOptions.parse(new String[0])).all())
        .extracting(StrategyRegistry.Entry::name)
        .contains("affinity-router").doesNotContain("affinity-router-exch");
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
}
