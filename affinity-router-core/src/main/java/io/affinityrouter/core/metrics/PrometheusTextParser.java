package io.affinityrouter.core.metrics;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Reads the Prometheus text exposition format (version 0.0.4, what vLLM's and SGLang's
 * {@code /metrics} serve) into {@link MetricSample}s.
 *
 * <p>Accepted: {@code \n} or {@code \r\n} line ends, blank lines, comments, {@code # HELP} and
 * {@code # TYPE} lines (checked, not kept), blanks around names, labels and values, a trailing
 * comma in a label set, label values with the escapes {@code \\}, {@code \"} and {@code \n},
 * values such as {@code 1}, {@code -1.5e-3}, {@code +Inf}, {@code NaN}, and an optional integer
 * timestamp in milliseconds. A line is malformed when it breaks the grammar, repeats a label
 * name, uses the reserved label {@code __name__}, has an unknown escape, a {@code # TYPE} other
 * than {@code counter}, {@code gauge}, {@code histogram}, {@code summary} or {@code untyped}, or
 * a finite value beyond the range of a double. Lines are checked one by one; the grouping of
 * samples into families (one {@code # TYPE} per family, before its samples) is not.
 *
 * <p>OpenMetrics text (what a Prometheus client serves when asked for
 * {@code application/openmetrics-text}, recognised by its closing {@code # EOF} line) reads the
 * same way, with its differences: the types {@code info}, {@code stateset},
 * {@code gaugehistogram} and {@code unknown}, exemplars after a sample's value
 * ({@code # {trace_id="..."} 1.0}, checked and dropped), and timestamps in seconds, fractions
 * allowed (kept in milliseconds). Nothing after {@code # EOF} is read.
 *
 * <p>Two modes: {@link #parseStrict} throws on the first malformed line; {@link #parseLenient}
 * skips malformed lines and counts them. Neither throws anything else for any input text.
 *
 * <p>Stateless and thread-safe.
 */
final class PrometheusTextParser {
  private static final Set<String> TYPES =
      Set.of("counter", "gauge", "histogram", "summary", "untyped");
  private static final Set<String> OPENMETRICS_TYPES = Set.of("counter", "gauge", "histogram",
      "summary", "unknown", "info", "stateset", "gaugehistogram");
  private static final int MAX_QUOTED = 40;

  private PrometheusTextParser() {}

  /**
   * Parses {@code text}, refusing any malformed line.
   *
   * @throws IllegalArgumentException naming the first malformed line and column and what was
   *     expected there, e.g. {@code "line 3, column 17: '}' (expected: '=' after label name
   *     'model_name')"}
   * @throws NullPointerException if {@code text} is null
   */
  public static ParsedExposition parseStrict(CharSequence text) {
    return parse(text, true);
  }

  /**
   * Parses {@code text}, skipping malformed lines; {@link ParsedExposition#skippedLines()} counts
   * them and {@link ParsedExposition#firstProblem()} says what was wrong with the first.
   *
   * @throws NullPointerException if {@code text} is null
   */
  public static ParsedExposition parseLenient(CharSequence text) {
    return parse(text, false);
  }

  private static ParsedExposition parse(CharSequence text, boolean strict) {
    Objects.requireNonNull(text, "text");
    List<MetricSample> samples = new ArrayList<>();
    int skipped = 0;
    String firstProblem = null;
    int eof = eofLine(text);
    boolean openMetrics = eof >= 0;
    int length = openMetrics ? eof : text.length();
    int start = 0;
    int lineNumber = 0;
    while (start < length || !openMetrics) {
      int end = start;
      while (end < length && text.charAt(end) != '\n') {
        end++;
      }
      lineNumber++;
      int lineEnd = end > start && text.charAt(end - 1) == '\r' ? end - 1 : end;
      try {
        MetricSample sample = new Line(text, start, lineEnd, lineNumber, openMetrics).parse();
        if (sample != null) {
          samples.add(sample);
        }
      } catch (IllegalArgumentException e) {
        if (strict) {
          throw e;
        }
        skipped++;
        if (firstProblem == null) {
          firstProblem = e.getMessage();
        }
      }
      if (end >= length) {
        break;
      }
      start = end + 1;
    }
    return new ParsedExposition(samples, skipped, Optional.ofNullable(firstProblem));
  }

  /**
   * Where OpenMetrics' {@code # EOF} line starts, if the text's last non-blank line is one, else
   * -1.
   */
  private static int eofLine(CharSequence text) {
    int end = text.length();
    while (end > 0 && Character.isWhitespace(text.charAt(end - 1))) {
      end--;
    }
    int start = end - "# EOF".length();
    if (start < 0 || !"# EOF".contentEquals(text.subSequence(start, end))) {
      return -1;
    }
    return start == 0 || text.charAt(start - 1) == '\n' ? start : -1;
  }

  /** A cursor over one line; throws {@link IllegalArgumentException} where the line breaks. */
  private static final class Line {
    private final CharSequence text;
    private final int start;
    private final int end;
    private final int number;
    private final boolean openMetrics;
    private int pos;

    Line(CharSequence text, int start, int end, int number, boolean openMetrics) {
      this.text = text;
      this.start = start;
      this.end = end;
      this.openMetrics = openMetrics;
      this.number = number;
      this.pos = start;
    }

    /** Returns the line's sample, or {@code null} for a blank or comment line. */
    @Nullable MetricSample parse() {
      skipBlanks();
      if (pos == end) {
        return null;
      }
      if (text.charAt(pos) == '#') {
        pos++;
        comment();
        return null;
      }
      return sample();
    }

    private void comment() {
      skipBlanks();
      int keywordStart = pos;
      while (pos < end && !isBlank(text.charAt(pos))) {
        pos++;
      }
      String keyword = text.subSequence(keywordStart, pos).toString();
      boolean help = keyword.equals("HELP");
      if (!help && !keyword.equals("TYPE")) {
        return; // a plain comment
      }
      skipBlanks();
      String name = metricName("a metric name after # " + keyword);
      if (help) {
        if (pos < end) {
          expectBlank("a blank after the metric name");
          helpText();
        }
        return;
      }
      expectBlank("a blank and a type after the metric name");
      skipBlanks();
      int typeStart = pos;
      while (pos < end && !isBlank(text.charAt(pos))) {
        pos++;
      }
      String type = text.subSequence(typeStart, pos).toString().toLowerCase(Locale.ROOT);
      if (!(openMetrics ? OPENMETRICS_TYPES : TYPES).contains(type)) {
        pos = typeStart;
        throw error(token(typeStart), (openMetrics
            ? "one of counter, gauge, histogram, summary, unknown, info, stateset, gaugehistogram"
            : "one of counter, gauge, histogram, summary, untyped") + " as the type of " + name);
      }
      skipBlanks();
      if (pos < end) {
        throw error(describe(pos), "end of line after the type");
      }
    }

    private void helpText() {
      while (pos < end) {
        if (text.charAt(pos++) == '\\') {
          if (pos == end || (text.charAt(pos) != '\\' && text.charAt(pos) != 'n')) {
            throw error(describe(pos), "\\\\ or \\n after a backslash in the help text");
          }
          pos++;
        }
      }
    }

    private MetricSample sample() {
      String name = metricName("a metric name, a comment or a blank line");
      int nameEnd = pos;
      Map<String, String> labels = Map.of();
      skipBlanks();
      if (pos < end && text.charAt(pos) == '{') {
        pos++;
        labels = labels();
        skipBlanks();
      } else if (pos < end && pos == nameEnd) {
        throw error(describe(pos), "'{' or a blank after the metric name");
      }
      if (pos == end) {
        throw error(describe(pos), "a value after " + (labels.isEmpty() ? "the name" : "'}'"));
      }
      int valueStart = pos;
      String valueToken = nextToken();
      Double value = ExpositionSyntax.parseValue(valueToken);
      if (value == null) {
        pos = valueStart;
        throw error(token(valueStart), "a float such as 1, -2.5e-3, +Inf or NaN");
      }
      OptionalLong timestamp = OptionalLong.empty();
      skipBlanks();
      if (pos < end && !exemplarNext()) {
        timestamp = OptionalLong.of(timestamp());
        skipBlanks();
      }
      boolean exemplar = pos < end && exemplarNext();
      if (exemplar) {
        exemplar();
      }
      if (pos < end) {
        throw error(describe(pos), exemplar ? "end of line after the exemplar"
            : timestamp.isPresent() ? "end of line after the timestamp"
            : "end of line after the value");
      }
      return new MetricSample(name, labels, value, timestamp);
    }

    private boolean exemplarNext() {
      return openMetrics && text.charAt(pos) == '#';
    }

    /** A timestamp: integer milliseconds, or OpenMetrics' seconds. */
    private long timestamp() {
      int timestampStart = pos;
      String token = nextToken();
      if (!openMetrics) {
        Long t = ExpositionSyntax.parseTimestamp(token);
        if (t == null) {
          pos = timestampStart;
          throw error(token(timestampStart), "an integer timestamp in milliseconds");
        }
        return t;
      }
      Double seconds = ExpositionSyntax.parseValue(token);
      if (seconds == null || !Double.isFinite(seconds)
          || Math.abs(seconds) > Long.MAX_VALUE / 1000.0) {
        pos = timestampStart;
        throw error(token(timestampStart), "a timestamp in seconds such as 1700000000.123");
      }
      return Math.round(seconds * 1000);
    }

    /** An OpenMetrics exemplar, {@code # {labels} value [timestamp]}: checked, not kept. */
    private void exemplar() {
      pos++;
      expectBlank("a blank after '#' opening an exemplar");
      skipBlanks();
      expect('{', "'{' opening the exemplar's labels");
      labels();
      skipBlanks();
      int valueStart = pos;
      if (pos == end || ExpositionSyntax.parseValue(nextToken()) == null) {
        pos = valueStart;
        throw error(pos == end ? "end of line" : token(valueStart), "the exemplar's value");
      }
      skipBlanks();
      if (pos < end) {
        timestamp();
        skipBlanks();
      }
    }

    private Map<String, String> labels() {
      Map<String, String> labels = new LinkedHashMap<>();
      while (true) {
        skipBlanks();
        if (pos < end && text.charAt(pos) == '}') {
          pos++;
          return labels;
        }
        int nameStart = pos;
        if (pos == end || !ExpositionSyntax.isLabelNameStart(text.charAt(pos))) {
          throw error(describe(pos), labels.isEmpty() ? "a label name or '}'"
              : "a label name or '}' after ','");
        }
        while (pos < end && ExpositionSyntax.isLabelNamePart(text.charAt(pos))) {
          pos++;
        }
        String labelName = text.subSequence(nameStart, pos).toString();
        if (labelName.equals("__name__") || labels.containsKey(labelName)) {
          pos = nameStart;
          throw error("'" + labelName + "'", labelName.equals("__name__")
              ? "a label name other than the reserved __name__" : "each label name once");
        }
        skipBlanks();
        expect('=', "'=' after label name '" + labelName + "'");
        skipBlanks();
        expect('"', "'\"' opening the value of label '" + labelName + "'");
        labels.put(labelName, labelValue(labelName));
        skipBlanks();
        if (pos < end && text.charAt(pos) == ',') {
          pos++;
        } else if (pos < end && text.charAt(pos) == '}') {
          pos++;
          return labels;
        } else {
          throw error(describe(pos), "',' or '}' after the value of label '" + labelName + "'");
        }
      }
    }

    private String labelValue(String labelName) {
      StringBuilder value = new StringBuilder();
      while (true) {
        if (pos == end) {
          throw error(describe(pos), "'\"' closing the value of label '" + labelName + "'");
        }
        char c = text.charAt(pos++);
        if (c == '"') {
          return value.toString();
        }
        if (c != '\\') {
          value.append(c);
          continue;
        }
        char escaped = pos < end ? text.charAt(pos) : 0;
        if (escaped == '\\' || escaped == '"') {
          value.append(escaped);
        } else if (escaped == 'n') {
          value.append('\n');
        } else {
          throw error(describe(pos), "\\\\, \\\" or \\n after a backslash in label '"
              + labelName + "'");
        }
        pos++;
      }
    }

    private String metricName(String expected) {
      int nameStart = pos;
      if (pos == end || !ExpositionSyntax.isMetricNameStart(text.charAt(pos))) {
        throw error(describe(pos), expected);
      }
      while (pos < end && ExpositionSyntax.isMetricNamePart(text.charAt(pos))) {
        pos++;
      }
      return text.subSequence(nameStart, pos).toString();
    }

    private String nextToken() {
      int tokenStart = pos;
      while (pos < end && !isBlank(text.charAt(pos))) {
        pos++;
      }
      return text.subSequence(tokenStart, pos).toString();
    }

    private void expect(char c, String expected) {
      if (pos == end || text.charAt(pos) != c) {
        throw error(describe(pos), expected);
      }
      pos++;
    }

    private void expectBlank(String expected) {
      if (pos == end || !isBlank(text.charAt(pos))) {
        throw error(describe(pos), expected);
      }
    }

    private void skipBlanks() {
      while (pos < end && isBlank(text.charAt(pos))) {
        pos++;
      }
    }

    private static boolean isBlank(char c) {
      return c == ' ' || c == '\t';
    }

    /** The character at {@code at}, quoted, or "end of line". */
    private String describe(int at) {
      if (at >= end) {
        return "end of line";
      }
      return quote(String.valueOf(text.charAt(at)));
    }

    /** The blank-delimited token at {@code at}, quoted and shortened. */
    private String token(int at) {
      int tokenEnd = at;
      while (tokenEnd < end && !isBlank(text.charAt(tokenEnd))) {
        tokenEnd++;
      }
      return quote(text.subSequence(at, tokenEnd).toString());
    }

    private static String quote(String s) {
      StringBuilder out = new StringBuilder("'");
      int n = Math.min(s.length(), MAX_QUOTED);
      for (int i = 0; i < n; i++) {
        char c = s.charAt(i);
        if (c < 0x20 || c == 0x7f) {
          out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
        } else {
          out.append(c);
        }
      }
      return out.append(s.length() > n ? "...'" : "'").toString();
    }

    private IllegalArgumentException error(String found, String expected) {
      return new IllegalArgumentException("line " + number + ", column " + (pos - start + 1)
          + ": " + found + " (expected: " + expected + ")");
    }
  }
}
