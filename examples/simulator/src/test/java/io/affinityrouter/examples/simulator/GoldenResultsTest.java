package io.affinityrouter.examples.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.examples.simulator.engine.RunResult;
import io.affinityrouter.examples.simulator.report.CsvReporter;
import io.affinityrouter.examples.simulator.workload.Traces;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Pins every routing decision the simulator measures: short, deterministic slices of the shared
 * traces and the agent generator, every strategy, every CSV column, compared byte for byte with
 * {@code src/test/resources/golden/results.csv}. A change that alters routing on purpose
 * regenerates the file in its own commit ({@code -Dgolden.update=true}) and says why.
 */
class GoldenResultsTest {
  private static final Path GOLDEN = Path.of("src/test/resources/golden/results.csv");

  /** One simulator run per line: the scenarios, gateway counts and router variants to pin. */
  private static final List<String> RUNS = List.of(
      "--workloads mooncake-conversation,mooncake-synthetic,ragpulse,agents,agents-hot"
          + " --limit 1500 --agent-sessions 60 --replicas 4"
          + " --variants kv=kvEvents:true;tuned=topK:3,batchSlowdownSequences:32",
      "--scenario scale-out --gateways 4 --workloads mooncake-conversation,agents --limit 1200"
          + " --agent-sessions 60 --replicas 4 --seed 7"
          + " --strategies affinity-router,affinity-router-noexch,kv,llm-d"
          + " --variants kv=kvEvents:true,loadExchangeMillis:100",
      "--scenario asleep --workloads agents --agent-sessions 80 --replicas 4"
          + " --strategies affinity-router,affinity-router-nosess,sglang-cache-aware",
      "--scenario replica-lost --workloads ragpulse --limit 1500 --replicas 4"
          + " --strategies affinity-router,consistent-hash",
      "--workloads agents-long --agent-sessions 16 --replicas 4"
          + " --strategies affinity-router,consistent-hash,llm-d");

  @Test
  void simulatorResultsMatchTheGoldenFile() throws IOException {
    StringBuilder actual = new StringBuilder();
    for (String run : RUNS) {
      SimulatorOptions o = SimulatorOptions.parse(new String[] {
          run + " --traces " + Traces.FOLDER});
      List<RunResult> results = Simulator.run(o);
      actual.append("# ").append(run).append('\n').append(CsvReporter.format(results));
    }
    String text = actual.toString();
    if (Boolean.getBoolean("golden.update")) {
      Files.writeString(GOLDEN, text, StandardCharsets.UTF_8);
    }
    Path written = Path.of("target/golden-actual.csv");
    Files.createDirectories(written.getParent());
    Files.writeString(written, text, StandardCharsets.UTF_8);
    assertThat(text)
        .as("simulator results (actual in %s; diff it against %s)", written, GOLDEN)
        .isEqualTo(Files.readString(GOLDEN, StandardCharsets.UTF_8));
  }
}
