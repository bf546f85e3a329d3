package io.affinityrouter.examples.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Command-line flags of the examples' {@code main} methods: {@code --name value} or
 * {@code --name=value}, each name possibly repeated, and switches ({@code --name}, no value); no
 * positional arguments.
 *
 * <p>Immutable after parsing and thread-safe. Every accessor refuses a bad value with an
 * {@link IllegalArgumentException} whose message names the flag.
 */
public final class Flags {
  private final Map<String, List<String>> values;

  private Flags(Map<String, List<String>> values) {
    this.values = values;
  }

  /**
   * Parses {@code args}, accepting only the given flag names (without the dashes).
   *
   * @throws IllegalArgumentException for an unknown flag, a positional argument or a missing value
   */
  public static Flags parse(String[] args, Set<String> known) {
    return parse(args, known, Set.of());
  }

  /**
   * Parses {@code args}, accepting only the given flag names and switches (without the dashes); a
   * switch takes no value ({@link #has} tells whether it was given).
   *
   * @throws IllegalArgumentException for an unknown flag, a positional argument or a missing value
   */
  public static Flags parse(String[] args, Set<String> known, Set<String> switches) {
    Map<String, List<String>> values = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (!arg.startsWith("--") || arg.length() == 2) {
        throw new IllegalArgumentException("argument: " + arg + " (expected: --flag value)");
      }
      String name;
      String value;
      int eq = arg.indexOf('=');
      if (switches.contains(arg.substring(2))) {
        values.computeIfAbsent(arg.substring(2), k -> new ArrayList<>()).add("true");
        continue;
      }
      if (eq > 0) {
        name = arg.substring(2, eq);
        value = arg.substring(eq + 1);
      } else {
        name = arg.substring(2);
        if (i + 1 >= args.length || args[i + 1].startsWith("--")) {
          throw new IllegalArgumentException("--" + name + ": no value (expected: --" + name
              + " value)");
        }
        value = args[++i];
      }
      if (!known.contains(name)) {
        throw new IllegalArgumentException("--" + name + ": unknown flag (expected one of "
            + new java.util.TreeSet<>(known) + (switches.isEmpty() ? "" : " or " + switches) + ")");
      }
      values.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
    }
    return new Flags(values);
  }

  /** The last value of the flag, or {@code defaultValue} when absent. */
  public String string(String name, String defaultValue) {
    List<String> v = values.get(name);
    return v == null ? defaultValue : v.get(v.size() - 1);
  }

  /** Every value of a repeatable flag, in order; empty when absent. */
  public List<String> all(String name) {
    return List.copyOf(values.getOrDefault(name, List.of()));
  }

  /** Whether the flag was given. */
  public boolean has(String name) {
    return values.containsKey(name);
  }

  /**
   * The flag as an integer.
   *
   * @throws IllegalArgumentException if it is not an integer
   */
  public int integer(String name, int defaultValue) {
    String v = string(name, null);
    if (v == null) {
      return defaultValue;
    }
    try {
      return Integer.parseInt(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--" + name + ": " + v + " (expected: an integer)");
    }
  }

  /**
   * The flag as a number.
   *
   * @throws IllegalArgumentException if it is not a number
   */
  public double number(String name, double defaultValue) {
    String v = string(name, null);
    if (v == null) {
      return defaultValue;
    }
    try {
      return Double.parseDouble(v.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--" + name + ": " + v + " (expected: a number)");
    }
  }
}
