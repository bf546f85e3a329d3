package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.examples.fakevllm.FakeVllmConfig;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The load driver against a real gateway and backends: its report adds up. */
class LoadDriverTest {

  @Test
  void reportsStatusesReasonsAndPerBackendHitRates() throws Exception {
    try (TestFleet fleet = TestFleet.start(3, FakeVllmConfig.builder().latencyScale(0.01))) {
      Gateway g = fleet.gateway(fleet.config(), null);
      List<String> args = new ArrayList<>(List.of("--gateway", g.baseUrl(), "--sessions", "8",
          "--turns", "4", "--concurrency", "4", "--model", TestFleet.MODEL,
          "--system-prompt-chars", "2000", "--max-tokens", "4"));
      for (int i = 0; i < 3; i++) {
        args.add("--backend");
        args.add(TestFleet.id(i) + "=" + fleet.backends.get(i).baseUrl());
      }
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      LoadDriver.run(args.toArray(new String[0]), new PrintStream(bytes, true,
          StandardCharsets.UTF_8));
      String report = bytes.toString(StandardCharsets.UTF_8);
      assertThat(report).contains("statuses: {200=32}")
          .contains("SESSION_CLAIMED=8").contains("SESSION_AFFINITY=24");
      Matcher m = Pattern.compile("(?m)^(vllm-\\d)\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s+([\\d.]+)%$")
          .matcher(report);
      int requests = 0;
      while (m.find()) {
        requests += Integer.parseInt(m.group(2));
        long prompt = Long.parseLong(m.group(3));
        long cached = Long.parseLong(m.group(4));
        assertThat(cached).isLessThanOrEqualTo(prompt);
        if (prompt > 0) {
          assertThat(Double.parseDouble(m.group(5))).isCloseTo(100.0 * cached / prompt,
              org.assertj.core.data.Offset.offset(0.06));
        }
      }
      assertThat(requests).as(report).isEqualTo(32);
      Matcher all = Pattern.compile("(?m)^all\\s+(\\d+)\\s+(\\d+)\\s+([\\d.]+)%$").matcher(report);
      assertThat(all.find()).as(report).isTrue();
      assertThat(Double.parseDouble(all.group(3))).as("turns 2..4 reuse their session's cache")
          .isGreaterThan(50);
    }
  }
}
