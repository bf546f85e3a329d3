package io.affinityrouter.examples.simulator.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.List;
import org.junit.jupiter.api.Test;

class RagPulseTraceReaderTest {

  @Test
  void readsTheWholeTraceWithItsSessions() {
    Workload w = RagPulseTraceReader.read(Traces.FOLDER.resolve("ragpulse"), "r",
        Integer.MAX_VALUE);
    List<SimRequest> all = w.allRequests();
    assertThat(all).hasSize(7_106);
    assertThat(all.stream().map(SimRequest::session).distinct().count()).isEqualTo(3_990);
    assertThat(w.spanNanos() / 86_400e9).as("days").isCloseTo(7, within(0.5));
    double meanInput = all.stream().mapToInt(SimRequest::inputTokens).average().orElseThrow();
    assertThat(meanInput).isCloseTo(2_944, within(2.0));
    assertThat(Traces.infiniteCacheBound(all)).isCloseTo(0.315, within(0.01));
  }

  @Test
  void compressesTheWeekIntoAShorterSpan() {
    Workload w = RagPulseTraceReader.read(Traces.FOLDER.resolve("ragpulse"), "r", 1000);
    Workload fast = w.compressed(100);
    assertThat(fast.heads().get(0).delayNanos()).isZero();
    assertThat((double) fast.spanNanos()).isCloseTo(w.spanNanos() / 100.0, within(1e6));
  }
}
