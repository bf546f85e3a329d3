package io.affinityrouter.examples.json;

import java.util.Map;

/** Writes values as compact JSON, for {@link Json#write}. Stateless and thread-safe. */
final class JsonWriter {
  private JsonWriter() {}

  static void write(StringBuilder sb, Object value) {
    if (value == null || value == Json.NULL) {
      sb.append("null");
    } else if (value instanceof String) {
      quote(sb, (String) value);
    } else if (value instanceof Boolean) {
      sb.append(value);
    } else if (value instanceof Double || value instanceof Float) {
      double d = ((Number) value).doubleValue();
      if (!Double.isFinite(d)) {
        throw new IllegalArgumentException("value: " + d + " (expected: a finite number)");
      }
      sb.append(d == Math.rint(d) && Math.abs(d) < 1e15 ? Long.toString((long) d)
          : Double.toString(d));
    } else if (value instanceof Number) {
      sb.append(value);
    } else if (value instanceof Map) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
        if (!(e.getKey() instanceof String)) {
          throw new IllegalArgumentException("key: " + e.getKey() + " (expected: a string)");
        }
        if (!first) {
          sb.append(',');
        }
        first = false;
        quote(sb, (String) e.getKey());
        sb.append(':');
        write(sb, e.getValue());
      }
      sb.append('}');
    } else if (value instanceof Iterable) {
      sb.append('[');
      boolean first = true;
      for (Object item : (Iterable<?>) value) {
        if (!first) {
          sb.append(',');
        }
        first = false;
        write(sb, item);
      }
      sb.append(']');
    } else {
      throw new IllegalArgumentException(
          "value: a " + value.getClass().getName() + " (expected: a JSON type)");
    }
  }

  private static void quote(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }
}
