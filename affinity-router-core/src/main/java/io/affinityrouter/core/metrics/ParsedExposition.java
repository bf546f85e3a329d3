package io.affinityrouter.core.metrics;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The samples read from one Prometheus text exposition, in the order written, with what a lenient
 * parse had to skip.
 *
 * <p>Immutable and thread-safe.
 *
 * @param samples the samples; unmodifiable
 * @param skippedLines malformed lines a lenient parse skipped ({@code 0} after a strict parse)
 * @param firstProblem the error a strict parse would have raised for the first skipped line
 */
record ParsedExposition(List<MetricSample> samples, int skippedLines,
    Optional<String> firstProblem) {

  /**
   * Validates and copies the fields.
   *
   * @throws IllegalArgumentException if {@code skippedLines} is negative, or a problem is given
   *     without skipped lines (or the reverse)
   * @throws NullPointerException if an argument or a sample is null
   */
  public ParsedExposition {
    samples = List.copyOf(samples);
    Objects.requireNonNull(firstProblem, "firstProblem");
    if (skippedLines < 0) {
      throw new IllegalArgumentException("skippedLines: " + skippedLines + " (expected: >= 0)");
    }
    if ((skippedLines > 0) != firstProblem.isPresent()) {
      throw new IllegalArgumentException("firstProblem: " + firstProblem
          + " (expected: present exactly when skippedLines > 0, here " + skippedLines + ")");
    }
  }
}
