package io.affinityrouter.examples.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.examples.simulator.report.PairedReporter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SimulatorSeedsTest {
  @Test
  void severalSeedsEndInAPairedComparisonWithTheRouterAsBaseline(@TempDir Path dir)
      throws Exception {
    SimulatorOptions o = SimulatorOptions.parse(new String[] {"--seeds", "1-2", "--workloads",
        "agents", "--agent-sessions", "30", "--replicas", "3", "--strategies",
        "round-robin,affinity-router", "--out", dir.toString()});
    List<PairedReporter.Sample> samples = Simulator.runSeeds(o);
    assertThat(samples).hasSize(4);
    assertThat(samples).extracting(PairedReporter.Sample::seed).containsExactly(1L, 1L, 2L, 2L);
    // a seed's run alone gives the same figures: seeds do not leak into each other
    PairedReporter.Sample alone = PairedReporter.Sample.of(2,
        Simulator.run(o.withSeed(2)).get(1));
    assertThat(samples.get(3)).isEqualTo(alone);
    List<String> paired = Files.readAllLines(dir.resolve("paired.csv"));
    assertThat(paired.get(0)).isEqualTo(PairedReporter.HEADER);
    assertThat(paired.get(1)).startsWith("agents,affinity-router,2,");
    assertThat(paired.get(2)).startsWith("agents,round-robin,2,");
    for (int seed = 1; seed <= 2; seed++) {
      assertThat(dir.resolve("seed-" + seed + "/results.csv")).exists();
      assertThat(dir.resolve("seed-" + seed + "/report.html")).exists();
    }
  }
}
