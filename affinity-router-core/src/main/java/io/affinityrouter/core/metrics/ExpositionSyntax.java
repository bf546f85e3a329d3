package io.affinityrouter.core.metrics;

import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The lexical rules of the Prometheus text exposition format (version 0.0.4): which characters
 * make metric and label names, how label values are escaped, how sample values are written.
 *
 * <p>Stateless and thread-safe.
 */
final class ExpositionSyntax {
  private ExpositionSyntax() {}

  /** Whether {@code c} may start a metric name ({@code [a-zA-Z_:]}). */
  static boolean isMetricNameStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
  }

  /** Whether {@code c} may continue a metric name ({@code [a-zA-Z0-9_:]}). */
  static boolean isMetricNamePart(char c) {
    return isMetricNameStart(c) || (c >= '0' && c <= '9');
  }

  /** Whether {@code c} may start a label name ({@code [a-zA-Z_]}). */
  static boolean isLabelNameStart(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  }

  /** Whether {@code c} may continue a label name ({@code [a-zA-Z0-9_]}). */
  static boolean isLabelNamePart(char c) {
    return isLabelNameStart(c) || (c >= '0' && c <= '9');
  }

  /** Whether {@code s} is a valid metric name. */
  static boolean isMetricName(String s) {
    return isName(s, true);
  }

  /** Whether {@code s} is a valid label name. */
  static boolean isLabelName(String s) {
    return isName(s, false);
  }

  private static boolean isName(String s, boolean metric) {
    if (s.isEmpty() || !(metric ? isMetricNameStart(s.charAt(0)) : isLabelNameStart(s.charAt(0)))) {
      return false;
    }
    for (int i = 1; i < s.length(); i++) {
      char c = s.charAt(i);
      if (!(metric ? isMetricNamePart(c) : isLabelNamePart(c))) {
        return false;
      }
    }
    return true;
  }

  /** Appends {@code value} escaped for a label value: {@code \\}, {@code \"} and {@code \n}. */
  static void appendEscapedLabelValue(StringBuilder out, String value) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      switch (c) {
        case '\\':
          out.append("\\\\");
          break;
        case '"':
          out.append("\\\"");
          break;
        case '\n':
          out.append("\\n");
          break;
        default:
          out.append(c);
      }
    }
  }

  /** Writes a sample value: {@code +Inf}, {@code -Inf}, {@code NaN} or a decimal float. */
  static String formatValue(double value) {
    if (Double.isNaN(value)) {
      return "NaN";
    }
    if (Double.isInfinite(value)) {
      return value > 0 ? "+Inf" : "-Inf";
    }
    return Double.toString(value);
  }

  /**
   * Reads a sample value as Go's {@code strconv.ParseFloat} (which Prometheus uses) reads decimal
   * input: an optional sign, digits with an optional fraction and exponent, or {@code Inf},
   * {@code Infinity} and {@code NaN} in any case. Hexadecimal floats and Java-only forms
   * ({@code 1d}, {@code 1f}) are refused, as are finite numbers beyond the range of a double.
   *
   * @return the value, or {@code null} if {@code token} is not a float
   */
  static @Nullable Double parseValue(String token) {
    int n = token.length();
    if (n == 0) {
      return null;
    }
    int i = 0;
    char first = token.charAt(0);
    boolean negative = first == '-';
    if (first == '+' || first == '-') {
      i = 1;
    }
    String rest = token.substring(i).toLowerCase(Locale.ROOT);
    if (rest.equals("inf") || rest.equals("infinity")) {
      return negative ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
    }
    if (rest.equals("nan")) {
      return Double.NaN;
    }
    int digits = 0;
    while (i < n && isDigit(token.charAt(i))) {
      i++;
      digits++;
    }
    if (i < n && token.charAt(i) == '.') {
      i++;
      while (i < n && isDigit(token.charAt(i))) {
        i++;
        digits++;
      }
    }
    if (digits == 0) {
      return null;
    }
    if (i < n && (token.charAt(i) == 'e' || token.charAt(i) == 'E')) {
      i++;
      if (i < n && (token.charAt(i) == '+' || token.charAt(i) == '-')) {
        i++;
      }
      int exponentDigits = 0;
      while (i < n && isDigit(token.charAt(i))) {
        i++;
        exponentDigits++;
      }
      if (exponentDigits == 0) {
        return null;
      }
    }
    if (i != n) {
      return null;
    }
    double value = Double.parseDouble(token);
    return Double.isInfinite(value) ? null : value;
  }

  /**
   * Reads a timestamp: an optionally negative decimal {@code long} of milliseconds.
   *
   * @return the timestamp, or {@code null} if {@code token} is not one
   */
  static @Nullable Long parseTimestamp(String token) {
    int start = token.startsWith("-") ? 1 : 0;
    if (token.length() == start || token.length() - start > 19) {
      return null;
    }
    for (int i = start; i < token.length(); i++) {
      if (!isDigit(token.charAt(i))) {
        return null;
      }
    }
    try {
      return Long.parseLong(token);
    } catch (NumberFormatException e) {
      return null; // 19 digits beyond Long.MAX_VALUE
    }
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }
}
