package io.affinityrouter.examples.simulator.workload;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A minimal JSON reader for one line of a JSONL trace: objects become {@code Map<String, Object>},
 * arrays {@code List<Object>}, numbers {@code Long} or {@code Double}, and strings, booleans and null
 * their Java counterparts. Enough for the trace formats; not a general-purpose parser (no surrogate
 * pairs in {@code \\u} escapes beyond the BMP). Stateless and thread-safe.
 */
public final class JsonLine {
  private final String s;
  private int at;

  private JsonLine(String s) {
    this.s = s;
  }

  /**
   * Parses one JSON value.
   *
   * @throws IllegalArgumentException if the text is not valid JSON
   */
  public static Object parse(String text) {
    JsonLine p = new JsonLine(text);
    Object v = p.value();
    p.skipSpace();
    if (p.at != text.length()) {
      throw p.error("end of input");
    }
    return v;
  }

  /**
   * Parses one JSON object.
   *
   * @throws IllegalArgumentException if the text is not a JSON object
   */
  @SuppressWarnings("unchecked")
  public static Map<String, Object> parseObject(String text) {
    Object v = parse(text);
    if (!(v instanceof Map)) {
      throw new IllegalArgumentException("line: not a JSON object (expected: {...})");
    }
    return (Map<String, Object>) v;
  }

  private Object value() {
    skipSpace();
    if (at >= s.length()) {
      throw error("a value");
    }
    char c = s.charAt(at);
    switch (c) {
      case '{':
        return object();
      case '[':
        return array();
      case '"':
        return string();
      case 't':
        return literal("true", Boolean.TRUE);
      case 'f':
        return literal("false", Boolean.FALSE);
      case 'n':
        return literal("null", null);
      default:
        return number();
    }
  }

  private Map<String, Object> object() {
    Map<String, Object> map = new LinkedHashMap<>();
    at++;
    skipSpace();
    if (peek() == '}') {
      at++;
      return map;
    }
    while (true) {
      skipSpace();
      if (peek() != '"') {
        throw error("a key");
      }
      String key = string();
      skipSpace();
      expect(':');
      map.put(key, value());
      skipSpace();
      char c = next();
      if (c == '}') {
        return map;
      }
      if (c != ',') {
        throw error("',' or '}'");
      }
    }
  }

  private List<Object> array() {
    List<Object> list = new ArrayList<>();
    at++;
    skipSpace();
    if (peek() == ']') {
      at++;
      return list;
    }
    while (true) {
      list.add(value());
      skipSpace();
      char c = next();
      if (c == ']') {
        return list;
      }
      if (c != ',') {
        throw error("',' or ']'");
      }
    }
  }

  private String string() {
    at++;
    StringBuilder b = new StringBuilder();
    while (true) {
      char c = next();
      if (c == '"') {
        return b.toString();
      }
      if (c == '\\') {
        char e = next();
        switch (e) {
          case 'n': b.append('\n'); break;
          case 't': b.append('\t'); break;
          case 'r': b.append('\r'); break;
          case 'b': b.append('\b'); break;
          case 'f': b.append('\f'); break;
          case 'u':
            if (at + 4 > s.length()) {
              throw error("4 hex digits");
            }
            b.append((char) Integer.parseInt(s.substring(at, at + 4), 16));
            at += 4;
            break;
          default: b.append(e);
        }
      } else {
        b.append(c);
      }
    }
  }

  private Object number() {
    int start = at;
    boolean fractional = false;
    while (at < s.length()) {
      char c = s.charAt(at);
      if (c == '.' || c == 'e' || c == 'E') {
        fractional = true;
      } else if (!(c == '-' || c == '+' || (c >= '0' && c <= '9'))) {
        break;
      }
      at++;
    }
    if (start == at) {
      throw error("a value");
    }
    String n = s.substring(start, at);
    try {
      return fractional ? (Object) Double.parseDouble(n) : (Object) Long.parseLong(n);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("number: '" + n + "' (expected: a JSON number)", e);
    }
  }

  private Object literal(String word, Object v) {
    if (!s.startsWith(word, at)) {
      throw error(word);
    }
    at += word.length();
    return v;
  }

  private void expect(char c) {
    if (next() != c) {
      throw error("'" + c + "'");
    }
  }

  private char peek() {
    return at < s.length() ? s.charAt(at) : '\0';
  }

  private char next() {
    if (at >= s.length()) {
      throw error("more input");
    }
    return s.charAt(at++);
  }

  private void skipSpace() {
    while (at < s.length() && Character.isWhitespace(s.charAt(at))) {
      at++;
    }
  }

  private IllegalArgumentException error(String expected) {
    return new IllegalArgumentException("json: unexpected input at " + at + " (expected: "
        + expected + ")");
  }

  /** Reads a field as a long (JSON number or a string holding one). */
  public static long longField(Map<String, Object> o, String name) {
    Object v = o.get(name);
    if (v instanceof Number) {
      return ((Number) v).longValue();
    }
    if (v instanceof String) {
      try {
        return Long.parseLong((String) v);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(name + ": '" + v + "' (expected: an integer)", e);
      }
    }
    throw new IllegalArgumentException(name + ": " + v + " (expected: an integer)");
  }

  /** Reads a field as a list of longs. */
  public static long[] longArray(Object v, String name) {
    if (!(v instanceof List)) {
      throw new IllegalArgumentException(name + ": " + v + " (expected: an array of integers)");
    }
    List<?> list = (List<?>) v;
    long[] out = new long[list.size()];
    for (int i = 0; i < out.length; i++) {
      Object x = list.get(i);
      if (!(x instanceof Long)) {
        throw new IllegalArgumentException(name + "[" + i + "]: " + x + " (expected: an integer)");
      }
      out[i] = (Long) x;
    }
    return out;
  }
}
