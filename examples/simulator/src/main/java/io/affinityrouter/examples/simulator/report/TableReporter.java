package io.affinityrouter.examples.simulator.report;

import io.affinityrouter.examples.simulator.engine.RunResult;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Formats results as a fixed-width text table, one block per workload, one row per strategy.
 * Stateless and thread-safe.
 */
public final class TableReporter {
  private TableReporter() {}

  /** The table for the results (in the given order, grouped by workload in order of appearance). */
  public static String format(List<RunResult> results) {
    StringBuilder b = new StringBuilder();
    Map<String, List<RunResult>> byWorkload = results.stream().collect(
        Collectors.groupingBy(RunResult::workload, java.util.LinkedHashMap::new,
            Collectors.toList()));
    for (Map.Entry<String, List<RunResult>> w : byWorkload.entrySet()) {
      RunResult first = w.getValue().get(0);
      String front = first.frontDoor().isEmpty() ? "" : "; " + first.frontDoor();
      b.append(String.format(Locale.ROOT, "%n== %s: %d requests, infinite-cache bound %.1f%% "
          + "of prompt tokens, TTFT p99 floor %.0f ms%s ==%n", w.getKey(), first.requests(),
          100 * first.boundRate(), first.ttftFloorMillis(99), front));
      b.append(String.format(Locale.ROOT,
          "%-22s %6s %6s %9s %9s %9s %7s %7s %7s %8s %6s %6s %8s %5s %7s %8s %7s %11s %s%n",
          "strategy", "hit%", "ofBnd", "TTFTp50ms", "TTFTp90ms", "TTFTp99ms", "E2Ep50s",
          "E2Ep99s", "req/s", "busy/avg", "repins", "moved", "recompMt", "wakes", "preempt",
          "xgwTurns", "xgwRep%", "gaveUp n/r", "moved by reason | repins by cause"));
      for (RunResult r : w.getValue()) {
        b.append(String.format(Locale.ROOT,
            "%-22s %6.1f %6.2f %9.0f %9.0f %9.0f %7.1f %7.1f %7.2f %8.2f %6d %6d %8.1f %5d %7d %8d"
                + " %7s %11s %s | %s%n",
            r.strategy(), 100 * r.hitRate(), r.ofBound(), r.ttftMillis(50), r.ttftMillis(90),
            r.ttftMillis(99), r.e2eSeconds(50), r.e2eSeconds(99), r.requestsPerSecond(),
            r.busiestOverMean(), r.repins(), r.movedTurns(), r.recomputedTokens() / 1e6, r.wakes(),
            r.preemptions(), r.crossGatewayTurns(), r.crossGatewayTurns() == 0 ? "-"
                : String.format(Locale.ROOT, "%.1f", 100 * r.crossGatewayRepinRate()),
            r.gaveUpNew() + "/" + r.gaveUpReturning(),
            r.moves().isEmpty() ? "-" : r.moves().toString(),
            r.repinsByCause().isEmpty() ? "-" : r.repinsByCause().toString()));
      }
    }
    return b.toString();
  }
}
