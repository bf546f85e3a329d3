package io.affinityrouter.examples.simulator.report;

import io.affinityrouter.examples.simulator.engine.RunResult;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Writes results as CSV, one row per (workload, strategy); new columns are appended, so tools that
 * read columns by position keep working. Stateless and thread-safe.
 */
public final class CsvReporter {
  /** The header row. */
  public static final String HEADER = "workload,strategy,requests,completed,dropped,not_routed,"
      + "failed_over,input_tokens,cached_tokens,bound_tokens,hit_rate,bound_rate,of_bound,"
      + "ttft_p50_ms,ttft_p90_ms,ttft_p99_ms,ttft_floor_p99_ms,e2e_p50_s,e2e_p90_s,e2e_p99_s,"
      + "requests_per_s,output_tokens_per_s,busiest_over_mean,repins,moved_turns,recomputed_tokens,"
      + "wakes,preemptions,moves,repins_by_cause,cross_gateway_turns,gave_up_new,gave_up_returning";

  private CsvReporter() {}

  /** The CSV text. */
  public static String format(List<RunResult> results) {
    StringBuilder b = new StringBuilder(HEADER).append('\n');
    for (RunResult r : results) {
      b.append(String.format(Locale.ROOT,
          "%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%.5f,%.5f,%.5f,%.2f,%.2f,%.2f,%.2f,%.3f,%.3f,%.3f,%.4f,"
              + "%.1f,%.4f,%d,%d,%d,%d,%d,\"%s\",\"%s\",%d,%d,%d%n",
          r.workload(), r.strategy(), r.requests(), r.completed(), r.dropped(), r.notRouted(),
          r.failedOver(), r.inputTokens(), r.cachedTokens(), r.boundTokens(), r.hitRate(),
          r.boundRate(), r.ofBound(), r.ttftMillis(50), r.ttftMillis(90), r.ttftMillis(99),
          r.ttftFloorMillis(99), r.e2eSeconds(50), r.e2eSeconds(90), r.e2eSeconds(99),
          r.requestsPerSecond(), r.outputTokensPerSecond(), r.busiestOverMean(), r.repins(),
          r.movedTurns(), r.recomputedTokens(), r.wakes(), r.preemptions(),
          r.moves().toString().replace("\"", "'"),
          r.repinsByCause().toString().replace("\"", "'"), r.crossGatewayTurns(), r.gaveUpNew(),
          r.gaveUpReturning()));
    }
    return b.toString();
  }

  /**
   * Writes the CSV file, creating parent folders.
   *
   * @throws UncheckedIOException if it cannot be written
   */
  public static void write(List<RunResult> results, Path file) {
    ReportFile.write(file, format(results));
  }
}
