package io.affinityrouter.examples.simulator.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MooncakeTraceReaderTest {
  private static final Path CONVERSATION = Traces.FOLDER.resolve("mooncake_conversation_trace.jsonl");
  private static final Path SYNTHETIC = Traces.FOLDER.resolve("mooncake_synthetic_trace.jsonl");

  @Test
  void readsTheWholeConversationTrace() {
    Workload w = MooncakeTraceReader.read(CONVERSATION, "c", Integer.MAX_VALUE);
    List<SimRequest> all = w.allRequests();
    assertThat(all).hasSize(12_031);
    assertThat(w.spanNanos() / 1e9).isCloseTo(3537, within(2.0));
    double meanInput = all.stream().mapToInt(SimRequest::inputTokens).average().orElseThrow();
    double meanOutput = all.stream().mapToInt(SimRequest::outputTokens).average().orElseThrow();
    assertThat(meanInput).isCloseTo(12_035, within(2.0));
    assertThat(meanOutput).isCloseTo(343, within(1.0));
    assertThat(Traces.infiniteCacheBound(all)).isCloseTo(0.374, within(0.005));
  }

  @Test
  void infersSessionsFromTheHashChain() {
    List<SimRequest> all =
        MooncakeTraceReader.read(CONVERSATION, "c", Integer.MAX_VALUE).allRequests();
    Map<String, Set<Long>> endsBySession = new HashMap<>();
    int continued = 0;
    for (SimRequest r : all) {
      Set<Long> ends = endsBySession.computeIfAbsent(r.session(), k -> new HashSet<>());
      if (!ends.isEmpty()) {
        continued++;
        // a continued turn repeats an earlier turn of its session: it holds that turn's last full
        // block (whose chained key implies all the blocks before it), at least the second block
        long[] deeper = Arrays.copyOfRange(r.keys(), 1, r.keys().length);
        assertThat(Arrays.stream(deeper).anyMatch(ends::contains)).as(r.toString()).isTrue();
      }
      int full = r.inputTokens() % MooncakeTraceReader.BLOCK_TOKENS == 0
          ? r.keys().length : r.keys().length - 1;
      if (full > 0) {
        ends.add(r.keys()[full - 1]);
      }
    }
    assertThat(continued).isEqualTo(12_031 - 8_099);
    assertThat(endsBySession).hasSize(8_099);
  }

  @Test
  void theBlockEveryConversationBeginsWithContinuesNoSession() {
    List<SimRequest> all =
        MooncakeTraceReader.read(CONVERSATION, "c", Integer.MAX_VALUE).allRequests();
    // every request of the trace begins with the same block
    assertThat(all).allMatch(r -> r.keys()[0] == all.get(0).keys()[0]);
    Map<String, Integer> requestsPerSession = new HashMap<>();
    all.forEach(r -> requestsPerSession.merge(r.session(), 1, Integer::sum));
    List<SimRequest> oneFullBlock = all.stream()
        .filter(r -> r.inputTokens() < 2 * MooncakeTraceReader.BLOCK_TOKENS).toList();
    assertThat(oneFullBlock).hasSize(1_354);
    // such a prompt shares at most the common block with anything: it neither continues a
    // session nor leaves one to continue
    assertThat(oneFullBlock).allMatch(r -> requestsPerSession.get(r.session()) == 1);
  }

  @Test
  void aSessionContinuesOnlyPastTheFirstBlock(@TempDir Path dir) throws Exception {
    Path trace = dir.resolve("t.jsonl");
    Files.writeString(trace, String.join("\n",
        line(0, 600, "0, 1"), // one full block: the common one
        line(1, 1200, "0, 2, 3"), // shares only block 0 with the first: a new session
        line(2, 2000, "0, 2, 4, 5"), // holds the second's last full block (2): continues it
        line(3, 1100, "0, 2, 6"))); // that tail was taken: a new session
    List<SimRequest> r = MooncakeTraceReader.read(trace, "t", 10).allRequests();
    assertThat(r.get(1).session()).isNotEqualTo(r.get(0).session());
    assertThat(r.get(2).session()).isEqualTo(r.get(1).session());
    assertThat(r.get(3).session()).isNotIn(r.get(0).session(), r.get(1).session());
  }

  private static String line(long timestampMs, int input, String hashIds) {
    return "{\"timestamp\": " + timestampMs + ", \"input_length\": " + input
        + ", \"output_length\": 10, \"hash_ids\": [" + hashIds + "]}";
  }

  @Test
  void readsTheSyntheticTraceAndItsHigherReuse() {
    List<SimRequest> all = MooncakeTraceReader.read(SYNTHETIC, "s", Integer.MAX_VALUE).allRequests();
    assertThat(all).hasSize(3_993);
    double meanInput = all.stream().mapToInt(SimRequest::inputTokens).average().orElseThrow();
    assertThat(meanInput).isCloseTo(15_326, within(2.0));
    assertThat(Traces.infiniteCacheBound(all)).isCloseTo(0.651, within(0.005));
  }

  @Test
  void honoursTheLimit() {
    assertThat(MooncakeTraceReader.read(CONVERSATION, "c", 10).size()).isEqualTo(10);
  }

  @Test
  void reportsTheLineOfAMalformedRecord(@TempDir Path dir) throws Exception {
    Path bad = dir.resolve("bad.jsonl");
    Files.writeString(bad, "{\"timestamp\": 0, \"input_length\": 10, \"output_length\": 1, "
        + "\"hash_ids\": [1]}\n{\"timestamp\": 1, \"input_length\": 10, \"output_length\": 1, "
        + "\"hash_ids\": []}\n");
    assertThatThrownBy(() -> MooncakeTraceReader.read(bad, "b", 10))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("bad.jsonl:2")
        .hasMessageContaining("hash_ids: [] (expected: at least one block)");
  }
}
