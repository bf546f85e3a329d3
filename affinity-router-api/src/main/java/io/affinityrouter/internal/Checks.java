package io.affinityrouter.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * Argument checks with the library's messages, {@code "topK: 0 (expected: > 0)"}, shared by its
 * modules. Not API (see the package). Each
 * returns its argument, or throws {@link IllegalArgumentException} ({@link NullPointerException}
 * for a null object) naming it. Stateless.
 */
public final class Checks {
  private Checks() {}

  public static int positive(int value, String name) {
    if (value <= 0) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
    }
    return value;
  }

  public static long positive(long value, String name) {
    if (value <= 0) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
    }
    return value;
  }

  public static long nonNegative(long value, String name) {
    if (value < 0) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: >= 0)");
    }
    return value;
  }

  public static long atLeast(long value, long min, String name) {
    if (value < min) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: >= " + min + ")");
    }
    return value;
  }

  public static double positiveFinite(double value, String name) {
    if (!(value > 0) || Double.isInfinite(value)) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: > 0 and finite)");
    }
    return value;
  }

  public static double nonNegativeFinite(double value, String name) {
    if (!(value >= 0) || Double.isInfinite(value)) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: >= 0 and finite)");
    }
    return value;
  }

  /** A value in [0, 1]. */
  public static double fraction(double value, String name) {
    if (!(value >= 0 && value <= 1)) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: 0..1)");
    }
    return value;
  }

  public static Duration positive(Duration value, String name) {
    Objects.requireNonNull(value, name);
    if (value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
    }
    return value;
  }

  public static Duration nonNegative(Duration value, String name) {
    Objects.requireNonNull(value, name);
    if (value.isNegative()) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: >= 0)");
    }
    return value;
  }

  public static String notBlank(String value, String name) {
    Objects.requireNonNull(value, name);
    if (value.isBlank()) {
      throw new IllegalArgumentException(name + ": blank (expected: a non-blank string)");
    }
    return value;
  }
}
