package io.affinityrouter.core.metrics;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * One sample line of a Prometheus text exposition: {@code name{label="value",...} value [timestamp]}.
 *
 * <p>Histogram and summary samples keep their suffixed names ({@code _bucket}, {@code _sum},
 * {@code _count}) and their {@code le}/{@code quantile} labels, as they appear in the text. Two
 * samples are equal when name, labels (in any order), value ({@code NaN} equals {@code NaN}, as
 * {@link Double#compare} says) and timestamp are.
 *
 * <p>Immutable and thread-safe.
 *
 * @param name the metric name, {@code [a-zA-Z_:][a-zA-Z0-9_:]*}
 * @param labels label names ({@code [a-zA-Z_][a-zA-Z0-9_]*}, not {@code __name__}) to unescaped
 *     values, in the order written; unmodifiable
 * @param value the sample value; may be {@code NaN} or infinite
 * @param timestampMillis the optional timestamp in milliseconds since the epoch
 */
record MetricSample(String name, Map<String, String> labels, double value,
    OptionalLong timestampMillis) {

  /**
   * Validates and copies the fields.
   *
   * @throws IllegalArgumentException if the name or a label name is not valid in the text format
   * @throws NullPointerException if an argument, label name or label value is null
   */
  public MetricSample {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(labels, "labels");
    Objects.requireNonNull(timestampMillis, "timestampMillis");
    if (!ExpositionSyntax.isMetricName(name)) {
      throw new IllegalArgumentException(
          "name: '" + name + "' (expected: a metric name, [a-zA-Z_:][a-zA-Z0-9_:]*)");
    }
    Map<String, String> copy = new LinkedHashMap<>();
    labels.forEach((k, v) -> {
      Objects.requireNonNull(k, "label name");
      Objects.requireNonNull(v, "label value");
      if (!ExpositionSyntax.isLabelName(k) || k.equals("__name__")) {
        throw new IllegalArgumentException(
            "label name: '" + k + "' (expected: [a-zA-Z_][a-zA-Z0-9_]*, not __name__)");
      }
      copy.put(k, v);
    });
    labels = Collections.unmodifiableMap(copy);
  }

  /**
   * A sample without a timestamp.
   *
   * @throws IllegalArgumentException if the name or a label name is not valid in the text format
   */
  public static MetricSample of(String name, Map<String, String> labels, double value) {
    return new MetricSample(name, labels, value, OptionalLong.empty());
  }

  /** The value of label {@code labelName}, if the sample has it. */
  public Optional<String> label(String labelName) {
    return Optional.ofNullable(labels.get(labelName));
  }

  /**
   * Renders the sample as one line of the text format, without the line break: label values
   * escaped, the value as {@code +Inf}, {@code -Inf}, {@code NaN} or a decimal float that
   * {@link PrometheusTextParser} reads back to the same double.
   */
  public String toText() {
    StringBuilder out = new StringBuilder(name.length() + 32 * (labels.size() + 1));
    out.append(name);
    if (!labels.isEmpty()) {
      out.append('{');
      boolean first = true;
      for (Map.Entry<String, String> e : labels.entrySet()) {
        if (!first) {
          out.append(',');
        }
        first = false;
        out.append(e.getKey()).append("=\"");
        ExpositionSyntax.appendEscapedLabelValue(out, e.getValue());
        out.append('"');
      }
      out.append('}');
    }
    out.append(' ').append(ExpositionSyntax.formatValue(value));
    timestampMillis.ifPresent(t -> out.append(' ').append(t));
    return out.toString();
  }
}
