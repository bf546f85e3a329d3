package io.affinityrouter.core.tokenizer;

import io.affinityrouter.core.tokenizer.ChatTemplate.TemplateException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Python's {@code json.dumps}, byte for byte, for what a template passes to {@code tojson}. */
final class Json {
  private Json() {}

  static String dumps(@Nullable Object v, int indent, boolean sortKeys, boolean ensureAscii,
      @Nullable Object separators) {
    String item = indent >= 0 ? "," : ", ";
    String key = ": ";
    if (separators instanceof List<?> seps && seps.size() == 2) {
      item = Interpreter.str(seps.get(0));
      key = Interpreter.str(seps.get(1));
    }
    StringBuilder b = new StringBuilder();
    write(b, v, indent, 0, sortKeys, ensureAscii, item, key);
    return b.toString();
  }

  private static void write(StringBuilder b, @Nullable Object v, int indent, int depth,
      boolean sortKeys, boolean ascii, String item, String key) {
    if (v == null) {
      b.append("null");
    } else if (v instanceof Boolean bool) {
      b.append(bool ? "true" : "false");
    } else if (v instanceof Long || v instanceof Integer) {
      b.append(v);
    } else if (v instanceof Double d) {
      b.append(d.isNaN() ? "NaN" : d.isInfinite() ? (d > 0 ? "Infinity" : "-Infinity")
          : floatRepr(d));
    } else if (v instanceof String s) {
      string(b, s, ascii);
    } else if (v instanceof List<?> l) {
      if (l.isEmpty()) {
        b.append("[]");
        return;
      }
      b.append('[');
      for (int i = 0; i < l.size(); i++) {
        b.append(i == 0 ? "" : item);
        newline(b, indent, depth + 1);
        write(b, l.get(i), indent, depth + 1, sortKeys, ascii, item, key);
      }
      newline(b, indent, depth);
      b.append(']');
    } else if (v instanceof Map<?, ?> m) {
      if (m.isEmpty()) {
        b.append("{}");
        return;
      }
      List<Map.Entry<?, ?>> entries = new ArrayList<>(m.entrySet());
      if (sortKeys) {
        entries.sort((x, y) -> String.valueOf(x.getKey()).compareTo(String.valueOf(y.getKey())));
      }
      b.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : entries) {
        b.append(first ? "" : item);
        first = false;
        newline(b, indent, depth + 1);
        Object k = e.getKey();
        string(b, k instanceof String s ? s : k == null ? "null" : Interpreter.repr(k), ascii);
        b.append(key);
        write(b, e.getValue(), indent, depth + 1, sortKeys, ascii, item, key);
      }
      newline(b, indent, depth);
      b.append('}');
    } else {
      throw new TemplateException(
          "Object of type " + Interpreter.typeName(v) + " is not JSON serializable");
    }
  }

  private static void newline(StringBuilder b, int indent, int depth) {
    if (indent >= 0) {
      b.append('\n').append(" ".repeat(indent * depth));
    }
  }

  private static void string(StringBuilder b, String s, boolean ascii) {
    b.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        case '\b' -> b.append("\\b");
        case '\f' -> b.append("\\f");
        default -> {
          if (c < 0x20 || (ascii && c > 0x7e)) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    b.append('"');
  }

  /** Python's {@code repr} of a float: the shortest round-trip digits, in Python's notation. */
  static String floatRepr(double d) {
    if (Double.isNaN(d)) {
      return "nan";
    }
    if (Double.isInfinite(d)) {
      return d > 0 ? "inf" : "-inf";
    }
    if (d == 0) {
      return (1 / d < 0) ? "-0.0" : "0.0";
    }
    BigDecimal exact = new BigDecimal(Double.toString(d)).stripTrailingZeros();
    String digits = exact.unscaledValue().abs().toString();
    int exponent = digits.length() - 1 - exact.scale();
    String sign = d < 0 ? "-" : "";
    if (exponent >= -5 && exponent < 16) {
      String plain = exact.abs().toPlainString();
      return sign + (plain.contains(".") ? plain : plain + ".0");
    }
    String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
    return sign + mantissa + "e" + (exponent < 0 ? "-" : "+")
        + String.format("%02d", Math.abs(exponent));
  }
}
