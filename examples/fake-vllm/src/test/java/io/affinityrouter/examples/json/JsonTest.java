package io.affinityrouter.examples.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {

  @Test
  void readsEveryType() {
    Object v = Json.parse(" {\"s\":\"a\\\"b\\\\c\\n\\u00e9\\/\",\"i\":-42,\"big\":12345678901234567890,"
        + "\"d\":1.5e2,\"t\":true,\"f\":false,\"n\":null,\"a\":[1,[],{}],\"o\":{\"k\":0}} ");
    @SuppressWarnings("unchecked")
    Map<String, Object> m = (Map<String, Object>) v;
    assertThat(m.get("s")).isEqualTo("a\"b\\c\né/");
    assertThat(m.get("i")).isEqualTo(-42L);
    assertThat(m.get("big")).isEqualTo(1.2345678901234567e19);
    assertThat(m.get("d")).isEqualTo(150.0);
    assertThat(m.get("t")).isEqualTo(true);
    assertThat(m.get("f")).isEqualTo(false);
    assertThat(m.get("n")).isSameAs(Json.NULL);
    assertThat((List<?>) m.get("a")).hasSize(3).first().isEqualTo(1L);
    assertThat(m.keySet()).containsExactly("s", "i", "big", "d", "t", "f", "n", "a", "o");
  }

  @Test
  void writesWhatItReads() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("text", "line\n\"quoted\"\t\u0001 é");
    m.put("n", 3);
    m.put("x", 2.5);
    m.put("whole", 4.0);
    m.put("list", Arrays.asList(1L, "two", null, true));
    m.put("nested", Map.of("k", List.of()));
    String json = Json.write(m);
    assertThat(json).startsWith("{\"text\":\"line\\n\\\"quoted\\\"\\t\\u0001 é\",\"n\":3,\"x\":2.5,"
        + "\"whole\":4,");
    Map<String, Object> back = Json.parseObject(json);
    assertThat(back.get("text")).isEqualTo(m.get("text"));
    assertThat(back.get("list")).isEqualTo(Arrays.asList(1L, "two", Json.NULL, true));
    assertThat(Json.write(back)).isEqualTo(json);
  }

  @Test
  void malformedInputNamesTheProblemAndOffset() {
    assertThatThrownBy(() -> Json.parse("{\"a\":1,}")).isInstanceOf(JsonException.class)
        .hasMessage("expected a string key at offset 7");
    assertThatThrownBy(() -> Json.parse("{\"a\" 1}")).hasMessage("expected ':' at offset 5");
    assertThatThrownBy(() -> Json.parse("[1 2]")).hasMessage("expected ',' or ']' at offset 3");
    assertThatThrownBy(() -> Json.parse("{\"a\":")).hasMessage(
        "unexpected end of input, expected a value at offset 5");
    assertThatThrownBy(() -> Json.parse("\"abc")).hasMessage("unterminated string at offset 4");
    assertThatThrownBy(() -> Json.parse("01")).hasMessage("unexpected '1' after the value at offset 1");
    assertThatThrownBy(() -> Json.parse("tru")).hasMessage("unexpected 't', expected a value at offset 0");
    assertThatThrownBy(() -> Json.parse("\"\\x\"")).hasMessage("bad escape '\\x' at offset 2");
    assertThatThrownBy(() -> Json.parse("\"a\nb\"")).hasMessage(
        "unescaped control character in a string at offset 2");
    assertThatThrownBy(() -> Json.parse("{\"a\":1,\"a\":2}")).hasMessage(
        "duplicate key \"a\" at offset 12");
    assertThatThrownBy(() -> Json.parse("1.")).hasMessage("expected a digit after '.' at offset 2");
    assertThatThrownBy(() -> Json.parse("")).hasMessage(
        "unexpected end of input, expected a value at offset 0");
    assertThatThrownBy(() -> Json.parseObject("[1]")).hasMessage(
        "expected a JSON object, got array");
  }

  @Test
  void nestingIsBounded() {
    String ok = "[".repeat(Json.MAX_DEPTH) + "]".repeat(Json.MAX_DEPTH);
    assertThat(Json.parse(ok)).isInstanceOf(List.class);
    String deep = "[".repeat(Json.MAX_DEPTH + 1) + "]".repeat(Json.MAX_DEPTH + 1);
    assertThatThrownBy(() -> Json.parse(deep)).isInstanceOf(JsonException.class)
        .hasMessageContaining("nested deeper than " + Json.MAX_DEPTH);
  }

  @Test
  void refusesWhatJsonCannotHold() {
    assertThatThrownBy(() -> Json.write(Double.NaN)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("value: NaN (expected: a finite number)");
    assertThatThrownBy(() -> Json.write(Map.of(1, 2))).hasMessage("key: 1 (expected: a string)");
    assertThatThrownBy(() -> Json.write(new Object())).hasMessageStartingWith("value: a java.lang.Object");
  }
}
