package io.affinityrouter.examples.simulator.report;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.examples.simulator.engine.RunResult;
import io.affinityrouter.examples.simulator.engine.Simulation;
import io.affinityrouter.examples.simulator.engine.SimulationConfig;
import io.affinityrouter.examples.simulator.strategy.StrategyRegistry;
import io.affinityrouter.examples.simulator.workload.AgentSessionGenerator;
import io.affinityrouter.examples.simulator.workload.Workload;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ReportersTest {
  private static final List<String> STRATEGIES =
      List.of("affinity-router", "least-request", "infinite-cache");
  private static final List<RunResult> RESULTS = new ArrayList<>();

  @BeforeAll
  static void run() {
    Workload w = AgentSessionGenerator.generate(
        AgentSessionGenerator.Config.defaults(1).withSessions(40), "agents");
    for (StrategyRegistry.Entry e : StrategyRegistry.standard().select(STRATEGIES)) {
      RESULTS.add(Simulation.run(w, e, SimulationConfig.steady(3, 1, 1), line -> { }));
    }
  }

  @Test
  void tableHasARowPerStrategyUnderItsWorkload() {
    String table = TableReporter.format(RESULTS);
    assertThat(table).contains("== agents: " + RESULTS.get(0).requests() + " requests");
    for (String s : STRATEGIES) {
      assertThat(table).containsPattern("(?m)^" + s + " +\\d+\\.\\d");
    }
    assertThat(table).contains("xgwTurns").contains("moved by reason | repins by cause");
  }

  @Test
  void tableTitlesNameTheFrontDoorOfSeveralGateways() {
    assertThat(TableReporter.format(RESULTS)).doesNotContain("front door");
    Workload w = AgentSessionGenerator.generate(
        AgentSessionGenerator.Config.defaults(1).withSessions(10), "agents");
    StrategyRegistry.Entry e = StrategyRegistry.standard().select(List.of("least-request")).get(0);
    RunResult r = Simulation.run(w, e, SimulationConfig.steady(3, 2, 1)
        .withFront(SimulationConfig.Front.SESSION), line -> { });
    assertThat(TableReporter.format(List.of(r)))
        .containsPattern("== agents: .*; 2 gateways, front door by session ==");
  }

  @Test
  void csvHasAHeaderAndOneParsableRowPerRun(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("sub/results.csv");
    CsvReporter.write(RESULTS, file);
    List<String> lines = Files.readAllLines(file);
    assertThat(lines).hasSize(1 + RESULTS.size());
    assertThat(lines.get(0)).isEqualTo(CsvReporter.HEADER).endsWith(",moves,repins_by_cause,"
        + "cross_gateway_turns,gave_up_new,gave_up_returning");
    int columns = CsvReporter.HEADER.split(",").length;
    for (int i = 0; i < RESULTS.size(); i++) {
      String[] cells = lines.get(i + 1).split(",(?=(?:[^\"]*\"[^\"]*\")*[^\"]*$)");
      assertThat(cells).hasSize(columns);
      assertThat(cells[1]).isEqualTo(STRATEGIES.get(i));
      assertThat(Double.parseDouble(cells[10])).isEqualTo(RESULTS.get(i).hitRate(),
          org.assertj.core.api.Assertions.within(1e-5));
      // newer columns come last, after every column that was there before them
      assertThat(cells[columns - 4]).isEqualTo("\"" + RESULTS.get(i).repinsByCause() + "\"");
      assertThat(Long.parseLong(cells[columns - 3])).isEqualTo(RESULTS.get(i).crossGatewayTurns());
      assertThat(Long.parseLong(cells[columns - 2])).isEqualTo(RESULTS.get(i).gaveUpNew());
      assertThat(Long.parseLong(cells[columns - 1])).isEqualTo(RESULTS.get(i).gaveUpReturning());
    }
  }

  @Test
  void htmlHasTheChartsOfEveryStrategy(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("report.html");
    HtmlReporter.write(RESULTS, file);
    String html = Files.readString(file);
    // per workload: hit-rate bars, TTFT CDF, and one load chart per strategy
    assertThat(html.split("<svg ", -1)).hasSize(1 + 2 + STRATEGIES.size());
    // the CDF has a line per strategy and the TTFT floor's, each load chart a line per replica
    assertThat(html.split("<polyline ", -1))
        .hasSize(1 + STRATEGIES.size() + 1 + 3 * STRATEGIES.size());
    assertThat(html).contains(">floor (no queue, infinite cache)<");
    assertThat(html).doesNotContain("NaN").doesNotContain("Infinity");
    for (String s : STRATEGIES) {
      assertThat(html).contains(">" + s + "<");
    }
  }
}
