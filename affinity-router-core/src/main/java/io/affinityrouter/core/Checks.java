package io.affinityrouter.core;

import java.time.Duration;
import java.util.Objects;

/** Builder argument checks, with messages in one style: {@code "topK: 0 (expected: > 0)"}. */
final class Checks {
  private Checks() {}

  static int positive(int value, String name) {
    if (value <= 0) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
    }
    return value;
  }

  static double positiveFinite(double value, String name) {
    if (!(value > 0) || Double.isInfinite(value)) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: > 0 and finite)");
    }
    return value;
  }

  static double nonNegativeFinite(double value, String name) {
    if (!(value >= 0) || Double.isInfinite(value)) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: >= 0 and finite)");
    }
    return value;
  }

  static Duration positive(Duration value, String name) {
    Objects.requireNonNull(value, name);
    if (value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
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
