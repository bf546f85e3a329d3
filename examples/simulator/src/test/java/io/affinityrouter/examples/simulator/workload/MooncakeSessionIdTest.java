package io.affinityrouter.examples.simulator.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code session_id} in Mooncake-format files: explicit sessions, mixed files, clear errors. */
class MooncakeSessionIdTest {

  @Test
  void linesWithTheSameSessionIdFormOneSessionInterleavedOrNot(@TempDir Path dir)
      throws Exception {
    Path file = dir.resolve("user_agents.jsonl");
    Files.writeString(file, String.join("\n",
        line(0, 600, "0, 1", "\"a\""),
        line(100, 1100, "0, 7, 8", "42"), // a number: session "42"
        line(200, 1100, "0, 1, 2", "\"a\""), // extends a's prompt: a's second turn
        line(300, 1600, "0, 7, 8, 9", "\"42\""), // the string "42" is the same session as 42
        line(400, 1600, "0, 50, 51, 52", "\"a\""), // no shared blocks, still session a
        line(500, 1200, "0, 7, 60", null))); // no session_id: inferred
    Workload w = MooncakeTraceReader.read(file, 10);
    assertThat(w.name()).isEqualTo("user_agents");
    List<SimRequest> r = w.allRequests();
    assertThat(r).extracting(SimRequest::session)
        .containsExactly("a", "42", "a", "42", "a", "mc-5");
    // turns of an explicit session are represented as inferred ones: open loop at their timestamps
    assertThat(w.heads()).hasSize(6);
    assertThat(r).allMatch(x -> x.next() == null);
    assertThat(r).extracting(SimRequest::delayNanos)
        .containsExactly(0L, 100_000_000L, 200_000_000L, 300_000_000L, 400_000_000L,
            500_000_000L);
    assertThat(r.get(2).keys()[1]).as("the turn repeats its session's prompt")
        .isEqualTo(r.get(0).keys()[1]);
  }

  @Test
  void aMixedFileInfersSessionsOnlyAmongLinesWithoutAnId(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("mixed.jsonl");
    Files.writeString(file, String.join("\n",
        line(0, 1100, "0, 2, 3", null), // inferred: mc-0
        line(1, 1600, "0, 2, 3, 4", "\"s\""), // extends mc-0's chain but says it is session s
        line(2, 1600, "0, 2, 3, 5", null), // mc-0's tail (block 3) is still there: continues mc-0
        line(3, 1600, "0, 9, 10, 11", "\"s\""),
        line(4, 2100, "0, 9, 10, 11, 12", null))); // s's chain: no inference into an id's session
    List<SimRequest> r = MooncakeTraceReader.read(file, 10).allRequests();
    assertThat(r).extracting(SimRequest::session)
        .containsExactly("mc-0", "s", "mc-0", "s", "mc-4");
  }

  @Test
  void namesAWorkloadAfterItsFile() {
    assertThat(MooncakeTraceReader.workloadName(Path.of("traces/agent_trace.jsonl")))
        .isEqualTo("agent_trace");
    assertThat(MooncakeTraceReader.workloadName(Path.of("trace.v2"))).isEqualTo("trace.v2");
    assertThatThrownBy(() -> MooncakeTraceReader.workloadName(Path.of(".jsonl")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("file: .jsonl (expected: a file name)");
  }

  @Test
  void badLinesFailWithTheFileLineAndTheReason(@TempDir Path dir) throws Exception {
    String good = line(0, 600, "0, 1", "\"a\"");
    List<String[]> cases = List.of(
        new String[] {"{\"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 1]}",
            "timestamp: missing (expected: an integer, milliseconds)"},
        new String[] {"{\"timestamp\": 1, \"output_length\": 5, \"hash_ids\": [0, 1]}",
            "input_length: missing (expected: an integer >= 1)"},
        new String[] {"{\"timestamp\": 1, \"input_length\": 600, \"hash_ids\": [0, 1]}",
            "output_length: missing (expected: an integer >= 0)"},
        new String[] {"{\"timestamp\": 1, \"input_length\": 600, \"output_length\": 5}",
            "hash_ids: missing (expected: an array of integers)"},
        new String[] {line(1, -600, "0, 1", null),
            "input_length: -600 (expected: an integer >= 1 and <= 2147483647)"},
        new String[] {"{\"timestamp\": 1, \"input_length\": 600, \"output_length\": -5, "
            + "\"hash_ids\": [0, 1]}",
            "output_length: -5 (expected: an integer >= 0 and <= 2147483647)"},
        new String[] {line(-1, 600, "0, 1", null), "timestamp: -1 (expected: >= 0)"},
        new String[] {line(1, 600, "0, 1, 2", null),
            "hash_ids: 3 blocks for input_length 600 (expected: ceil(600 / 512) = 2)"},
        new String[] {line(1, 600, "0, 1", "1.5"),
            "session_id: 1.5 (expected: a non-empty string or an integer)"},
        new String[] {line(1, 600, "0, 1", "[\"a\"]"),
            "session_id: [a] (expected: a non-empty string or an integer)"},
        new String[] {line(1, 600, "0, 1", "true"),
            "session_id: true (expected: a non-empty string or an integer)"},
        new String[] {line(1, 600, "0, 1", "\"\""),
            "session_id: \"\" (expected: a non-empty string or an integer)"});
    for (String[] c : cases) {
      Path file = dir.resolve("bad.jsonl");
      Files.writeString(file, good + "\n\n" + c[0] + "\n");
      assertThatThrownBy(() -> MooncakeTraceReader.read(file, 10))
          .as(c[0])
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(file + ":3: " + c[1]);
    }
  }

  @Test
  void aNullSessionIdCountsAsAbsent(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("n.jsonl");
    Files.writeString(file, line(0, 600, "0, 1", "null"));
    assertThat(MooncakeTraceReader.read(file, 10).allRequests().get(0).session())
        .isEqualTo("mc-0");
  }

  private static String line(long timestampMs, int input, String hashIds, String sessionId) {
    return "{\"timestamp\": " + timestampMs + ", \"input_length\": " + input
        + ", \"output_length\": 10, \"hash_ids\": [" + hashIds + "]"
        + (sessionId == null ? "" : ", \"session_id\": " + sessionId) + "}";
  }
}
