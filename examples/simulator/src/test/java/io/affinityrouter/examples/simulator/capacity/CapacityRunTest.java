package io.affinityrouter.examples.simulator.capacity;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.examples.simulator.SimulatorOptions;
import io.affinityrouter.examples.simulator.engine.RunResult;
import io.affinityrouter.examples.simulator.workload.Traces;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A capacity run end to end, on the start of the Mooncake conversation trace. */
class CapacityRunTest {
  @TempDir
  Path out;

  @Test
  void writesOneRowPerStrategyWithTheDocumentedColumns() throws Exception {
    SimulatorOptions o = SimulatorOptions.parse(new String[] {"--capacity", "--workloads",
        "mooncake-conversation", "--traces", Traces.FOLDER.toString(), "--limit", "600", "--strategies",
        "affinity-router,least-request", "--replicas", "2", "--slo-p90-ms", "4000", "--seeds", "2",
        "--out", out.toString()});
    assertThat(o.seeds()).containsExactly(42L, 43L);
    List<CapacityRun.WorkloadCapacity> w = CapacityRun.run(o, line -> { });
    CapacityReporter.write(w, out);

    List<String> csv = Files.readAllLines(out.resolve(CapacityReporter.CSV));
    // the first seven columns are read by name by other tools: they stay first, in this order
    assertThat(csv.get(0)).startsWith("workload,strategy,slo_p90_ms,capacity_rps,hit_at_capacity,"
        + "hit_at_1_5x,served_rps_at_1_5x,capacity_rps_min,goodput_rps_at_capacity,"
        + "goodput_rps_at_1_5x,goodput_rps_at_2x,hit_at_2x,session_slo_attainment");
    assertThat(csv).hasSize(3);
    assertThat(csv.get(1)).startsWith("mooncake-conversation,affinity-router,4000,");
    CapacityRun.StrategyCapacity ours = w.get(0).strategies().get(0);
    assertThat(ours.capacity()).isPositive();
    // the run at capacity meets the SLO within the sweep's precision
    assertThat(ours.atCapacity().ttftMillis(90)).isLessThan(4000 * 1.3);
    // the median of two seeds lies between them, the minimum is the lower one
    assertThat(ours.seeds()).extracting(CapacityRun.SeedRun::seed).containsExactly(42L, 43L);
    double lo = Math.min(ours.seeds().get(0).capacity(), ours.seeds().get(1).capacity());
    double hi = Math.max(ours.seeds().get(0).capacity(), ours.seeds().get(1).capacity());
    assertThat(ours.capacityMin()).isEqualTo(lo);
    assertThat(ours.capacity()).isBetween(lo, hi);
    // the two seeds replay different arrival spreads of the same trace
    assertThat(ours.seeds().get(0).points().get(0).result().ttftMicros())
        .isNotEqualTo(ours.seeds().get(1).points().get(0).result().ttftMicros());
    // past capacity is measured at 1.5 x, 2 x and 3 x the router's capacity for every strategy
    for (CapacityRun.StrategyCapacity s : w.get(0).strategies()) {
      assertThat(s.pastRate()).isCloseTo(1.5 * ours.capacity(),
          org.assertj.core.api.Assertions.within(1e-9));
      assertThat(s.farPastRate()).isCloseTo(2 * ours.capacity(),
          org.assertj.core.api.Assertions.within(1e-9));
      assertThat(s.overloadRate()).isCloseTo(3 * ours.capacity(),
          org.assertj.core.api.Assertions.within(1e-9));
      assertThat(s.wall(CapacityRun.Wall::overload)).isPositive();
      assertThat(s.overload(r -> r.goodputPerSecond(4000)))
          .isLessThanOrEqualTo(s.overload(RunResult::requestsPerSecond));
      // a run that carries its rate serves it: at capacity the served ratio is near the floor
      assertThat(s.atCapacity(RunResult::servedRatio)).isGreaterThan(0.9);
      assertThat(s.farPast(r -> r.goodputPerSecond(4000)))
          .isLessThanOrEqualTo(s.farPast(RunResult::requestsPerSecond));
      assertThat(s.pastCapacity().ttftMillis(90)).isGreaterThan(s.atCapacity() == null ? 0
          : s.atCapacity().ttftMillis(90));
    }
    assertThat(Files.readString(out.resolve(CapacityReporter.SVG)))
        .startsWith("<svg").contains("affinity-router").contains("SLO 4000 ms");
    assertThat(CapacityReporter.table(w)).contains("vsPeer").contains("least-request")
        .contains("gp@3x").contains("wall s 1/1.5/2/3x")
        .doesNotContain("front door"); // one gateway: nothing to pick
  }
}
