package io.affinityrouter.core.tokenizer;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Reads a JSON value into the Java values a template evaluates, keys in document order. */
final class JsonValues {
  private static final int MAX_DEPTH = 64;

  private JsonValues() {}

  /** Reads the value at the parser's current token. */
  static @Nullable Object read(JsonParser p) throws IOException {
    return read(p, 0);
  }

  private static @Nullable Object read(JsonParser p, int depth) throws IOException {
    if (depth > MAX_DEPTH) {
      throw new IOException("nested deeper than " + MAX_DEPTH);
    }
    JsonToken t = p.currentToken();
    if (t == null) {
      throw new IOException("unexpected end of input");
    }
    switch (t) {
      case START_OBJECT -> {
        Map<String, Object> m = new LinkedHashMap<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String key = p.currentName();
          p.nextToken();
          m.put(key, read(p, depth + 1));
        }
        return m;
      }
      case START_ARRAY -> {
        List<Object> l = new ArrayList<>();
        while (p.nextToken() != JsonToken.END_ARRAY) {
          l.add(read(p, depth + 1));
        }
        return l;
      }
      case VALUE_STRING -> {
        return p.getText();
      }
      case VALUE_NUMBER_INT -> {
        if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
          return p.getDoubleValue();
        }
        return p.getLongValue();
      }
      case VALUE_NUMBER_FLOAT -> {
        return p.getDoubleValue();
      }
      case VALUE_TRUE -> {
        return Boolean.TRUE;
      }
      case VALUE_FALSE -> {
        return Boolean.FALSE;
      }
      case VALUE_NULL -> {
        return null;
      }
      default -> throw new IOException("unexpected " + t);
    }
  }
}
