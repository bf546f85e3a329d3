package io.affinityrouter.examples.simulator.workload;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.examples.simulator.SimulatorOptions;
import io.affinityrouter.examples.simulator.WorkloadFactory;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The replay of a trace whose requests share timestamps: spread over the tick, seeded. */
class WorkloadSpreadTest {
  private static final Path CONVERSATION =
      Traces.FOLDER.resolve("mooncake_conversation_trace.jsonl");

  @Test
  void theConversationTraceLogsThreeSecondTicks() {
    Workload w = MooncakeTraceReader.read(CONVERSATION, "c", Integer.MAX_VALUE);
    Workload.Ties t = w.ties();
    assertThat(t.requests()).isEqualTo(12_031);
    assertThat(t.distinct()).isEqualTo(1_180);
    assertThat(t.tickNanos()).isEqualTo(2_997_000_000L); // ticks of 3,000 ± 3 ms
    assertThat(t.coarse()).isTrue();
  }

  @Test
  void tiesSpreadOverTheTickSeededAndInTheFilesOrder() {
    Workload w = MooncakeTraceReader.read(CONVERSATION, "c", Integer.MAX_VALUE);
    long tick = w.ties().tickNanos();
    Workload a = w.spreadTies(1);
    Workload again = w.spreadTies(1);
    Workload other = w.spreadTies(2);
    List<SimRequest> before = w.heads();
    List<SimRequest> after = a.heads();
    assertThat(after).hasSameSizeAs(before);
    int moved = 0;
    for (int i = 0; i < before.size(); i++) {
      SimRequest b = before.get(i);
      SimRequest s = after.get(i);
      // the same request at the same position: the trace's order is kept
      assertThat(s.id()).isEqualTo(b.id());
      assertThat(s.delayNanos()).isBetween(b.delayNanos(), b.delayNanos() + tick - 1);
      assertThat(s.delayNanos()).isEqualTo(again.heads().get(i).delayNanos());
      if (s.delayNanos() != other.heads().get(i).delayNanos()) {
        moved++;
      }
    }
    assertThat(a.ties().distinct()).isGreaterThan(12_000);
    assertThat(moved).as("another seed, another spread").isGreaterThan(10_000);
    // spread evenly: the mean offset within a tick is about half of it
    double mean = 0;
    for (int i = 0; i < before.size(); i++) {
      mean += after.get(i).delayNanos() - before.get(i).delayNanos();
    }
    assertThat(mean / before.size() / tick).isBetween(0.45, 0.55);
  }

  @Test
  void aTraceWithoutTiesIsLeftAsItIs() {
    Workload w = MooncakeTraceReader.read(
        Traces.FOLDER.resolve("mooncake_synthetic_trace.jsonl"), "s", 200);
    Workload.Ties t = w.ties();
    assertThat(t.coarse()).isFalse();
    Workload spread = w.spreadTies(7);
    for (int i = 0; i < w.heads().size(); i++) { // a shared millisecond is spread within it
      long d = spread.heads().get(i).delayNanos() - w.heads().get(i).delayNanos();
      assertThat(d).isBetween(0L, t.tickNanos() - 1);
    }
  }

  @Test
  void theFactorySpreadsByTheRunsSeedUnlessToldNot() {
    SimulatorOptions o = SimulatorOptions.parse(new String[] {"--traces",
        Traces.FOLDER.toString(), "--limit", "300", "--seed", "5"});
    Workload spread = WorkloadFactory.raw("mooncake-conversation", o);
    assertThat(spread.ties().distinct()).isEqualTo(300);
    assertThat(WorkloadFactory.raw("mooncake-conversation", o).heads())
        .extracting(SimRequest::delayNanos)
        .isEqualTo(spread.heads().stream().map(SimRequest::delayNanos).toList());
    SimulatorOptions kept = SimulatorOptions.parse(new String[] {"--traces",
        Traces.FOLDER.toString(), "--limit", "300", "--no-spread"});
    assertThat(WorkloadFactory.raw("mooncake-conversation", kept).ties().distinct())
        .isLessThan(40);
    assertThat(WorkloadFactory.tiesWarning("mooncake-conversation", kept))
        .contains("300 requests at").contains("--no-spread");
    assertThat(WorkloadFactory.tiesWarning("agents", o)).isNull();
  }
}
