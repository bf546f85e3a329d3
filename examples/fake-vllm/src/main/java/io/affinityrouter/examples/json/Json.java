package io.affinityrouter.examples.json;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small, strict JSON (RFC 8259) reader and writer for the examples, so they need no JSON library.
 *
 * <p>Reading maps objects to {@code Map<String, Object>} (insertion-ordered, unmodifiable), arrays to
 * {@code List<Object>} (unmodifiable), strings to {@link String}, numbers to {@link Long} when they
 * are integers that fit, else {@link Double}, {@code true}/{@code false} to {@link Boolean}, and
 * {@code null} to {@link #NULL}. Nesting is limited to {@value #MAX_DEPTH} levels. Writing accepts
 * the same types (plus any {@link Number}, and Java {@code null}).
 *
 * <p>Stateless and thread-safe.
 */
public final class Json {
  /** The deepest nesting of arrays and objects accepted: {@value}. */
  public static final int MAX_DEPTH = 64;

  /** What a JSON {@code null} reads as (maps and lists cannot hold Java nulls unambiguously). */
  public static final Object NULL = new Object() {
    @Override
    public String toString() {
      return "null";
    }
  };

  private final String text;
  private int pos;

  private Json(String text) {
    this.text = text;
  }

  /**
   * Reads one JSON value that must fill the whole text (surrounding whitespace allowed).
   *
   * @throws JsonException if the text is not valid JSON, with the offset of the problem
   * @throws NullPointerException if {@code text} is null
   */
  public static Object parse(String text) {
    Json p = new Json(text);
    p.skipWhitespace();
    Object value = p.readValue(0);
    p.skipWhitespace();
    if (p.pos != text.length()) {
      throw p.error("unexpected '" + text.charAt(p.pos) + "' after the value");
    }
    return value;
  }

  /**
   * Reads a JSON object.
   *
   * @throws JsonException if the text is not valid JSON or not an object
   */
  @SuppressWarnings("unchecked")
  public static Map<String, Object> parseObject(String text) {
    Object value = parse(text);
    if (!(value instanceof Map)) {
      throw new JsonException("expected a JSON object, got " + typeName(value));
    }
    return (Map<String, Object>) value;
  }

  /** The JSON type name of a value read by {@link #parse} ("object", "string", ...). */
  public static String typeName(Object value) {
    if (value instanceof Map) {
      return "object";
    } else if (value instanceof List) {
      return "array";
    } else if (value instanceof String) {
      return "string";
    } else if (value instanceof Number) {
      return "number";
    } else if (value instanceof Boolean) {
      return "boolean";
    }
    return "null";
  }

  /**
   * Writes a value as compact JSON.
   *
   * @throws IllegalArgumentException for a type JSON cannot represent, a non-string map key, or a
   *     non-finite number
   */
  public static String write(Object value) {
    StringBuilder sb = new StringBuilder(64);
    JsonWriter.write(sb, value);
    return sb.toString();
  }

  private Object readValue(int depth) {
    if (pos >= text.length()) {
      throw error("unexpected end of input, expected a value");
    }
    char c = text.charAt(pos);
    switch (c) {
      case '{':
        return readObject(depth + 1);
      case '[':
        return readArray(depth + 1);
      case '"':
        return readString();
      case 't':
        return readLiteral("true", Boolean.TRUE);
      case 'f':
        return readLiteral("false", Boolean.FALSE);
      case 'n':
        return readLiteral("null", NULL);
      default:
        if (c == '-' || (c >= '0' && c <= '9')) {
          return readNumber();
        }
        throw error("unexpected '" + c + "', expected a value");
    }
  }

  private Map<String, Object> readObject(int depth) {
    checkDepth(depth);
    pos++; // '{'
    Map<String, Object> map = new LinkedHashMap<>();
    skipWhitespace();
    if (peek() == '}') {
      pos++;
      return Collections.unmodifiableMap(map);
    }
    while (true) {
      skipWhitespace();
      if (peek() != '"') {
        throw error("expected a string key");
      }
      String key = readString();
      skipWhitespace();
      expect(':');
      skipWhitespace();
      if (map.put(key, readValue(depth)) != null) {
        throw error("duplicate key \"" + key + "\"");
      }
      skipWhitespace();
      char c = peek();
      pos++;
      if (c == '}') {
        return Collections.unmodifiableMap(map);
      } else if (c != ',') {
        pos--;
        throw error(c == 0 ? "unexpected end of input, expected ',' or '}'"
            : "expected ',' or '}'");
      }
    }
  }

  private List<Object> readArray(int depth) {
    checkDepth(depth);
    pos++; // '['
    List<Object> list = new ArrayList<>();
    skipWhitespace();
    if (peek() == ']') {
      pos++;
      return Collections.unmodifiableList(list);
    }
    while (true) {
      skipWhitespace();
      list.add(readValue(depth));
      skipWhitespace();
      char c = peek();
      pos++;
      if (c == ']') {
        return Collections.unmodifiableList(list);
      } else if (c != ',') {
        pos--;
        throw error(c == 0 ? "unexpected end of input, expected ',' or ']'"
            : "expected ',' or ']'");
      }
    }
  }

  private String readString() {
    pos++; // opening quote
    StringBuilder sb = null;
    int start = pos;
    while (pos < text.length()) {
      char c = text.charAt(pos);
      if (c == '"') {
        String s = sb == null ? text.substring(start, pos) : sb.append(text, start, pos).toString();
        pos++;
        return s;
      } else if (c == '\\') {
        if (sb == null) {
          sb = new StringBuilder();
        }
        sb.append(text, start, pos);
        pos++;
        sb.append(readEscape());
        start = pos;
      } else if (c < 0x20) {
        throw error("unescaped control character in a string");
      } else {
        pos++;
      }
    }
    throw error("unterminated string");
  }

  private char readEscape() {
    if (pos >= text.length()) {
      throw error("unterminated string");
    }
    char c = text.charAt(pos++);
    switch (c) {
      case '"':
      case '\\':
      case '/':
        return c;
      case 'b':
        return '\b';
      case 'f':
        return '\f';
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case 'u':
        if (pos + 4 > text.length()) {
          throw error("truncated \\u escape");
        }
        int v = 0;
        for (int i = 0; i < 4; i++) {
          int d = Character.digit(text.charAt(pos++), 16);
          if (d < 0) {
            pos--;
            throw error("bad hex digit in a \\u escape");
          }
          v = v * 16 + d;
        }
        return (char) v;
      default:
        pos--;
        throw error("bad escape '\\" + c + "'");
    }
  }

  private Number readNumber() {
    int start = pos;
    if (peek() == '-') {
      pos++;
    }
    if (peek() == '0') {
      pos++;
    } else if (isDigit(peek())) {
      skipDigits();
    } else {
      throw error("expected a digit");
    }
    boolean integer = true;
    if (peek() == '.') {
      integer = false;
      pos++;
      if (!isDigit(peek())) {
        throw error("expected a digit after '.'");
      }
      skipDigits();
    }
    if (peek() == 'e' || peek() == 'E') {
      integer = false;
      pos++;
      if (peek() == '+' || peek() == '-') {
        pos++;
      }
      if (!isDigit(peek())) {
        throw error("expected a digit in the exponent");
      }
      skipDigits();
    }
    String s = text.substring(start, pos);
    if (integer && s.length() < 19) {
      return Long.parseLong(s);
    }
    return Double.parseDouble(s);
  }

  private Object readLiteral(String word, Object value) {
    if (!text.startsWith(word, pos)) {
      throw error("unexpected '" + text.charAt(pos) + "', expected a value");
    }
    pos += word.length();
    return value;
  }

  private void skipDigits() {
    while (isDigit(peek())) {
      pos++;
    }
  }

  private static boolean isDigit(char c) {
    return c >= '0' && c <= '9';
  }

  private char peek() {
    return pos < text.length() ? text.charAt(pos) : 0;
  }

  private void expect(char c) {
    if (peek() != c) {
      throw error(pos >= text.length() ? "unexpected end of input, expected '" + c + "'"
          : "expected '" + c + "'");
    }
    pos++;
  }

  private void skipWhitespace() {
    while (pos < text.length()) {
      char c = text.charAt(pos);
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
        return;
      }
      pos++;
    }
  }

  private void checkDepth(int depth) {
    if (depth > MAX_DEPTH) {
      throw error("nested deeper than " + MAX_DEPTH + " levels");
    }
  }

  private JsonException error(String message) {
    return new JsonException(message + " at offset " + pos);
  }
}
