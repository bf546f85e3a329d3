package io.affinityrouter;

import java.util.Objects;

/** Argument checks with messages in one style: {@code "topK: 0 (expected: > 0)"}. */
final class Checks {
  private Checks() {}

  static <T> T notNull(T value, String name) {
    return Objects.requireNonNull(value, name);
  }

  static long nonNegative(long value, String name) {
    if (value < 0) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: >= 0)");
    }
    return value;
  }

  static double nonNegativeFinite(double value, String name) {
    if (!(value >= 0) || Double.isInfinite(value)) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: a finite number >= 0)");
    }
    return value;
  }

  static double fraction(double value, String name) {
    if (!(value >= 0 && value <= 1)) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: 0..1)");
    }
    return value;
  }

  static String notBlank(String value, String name) {
    Objects.requireNonNull(value, name);
    if (value.isBlank()) {
      throw new IllegalArgumentException(name + ": blank (expected: a non-blank string)");
    }
    return value;
  }
}
