package io.affinityrouter.examples.simulator.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonLineTest {
  @Test
  void parsesNestedObjectsArraysStringsAndNumbers() {
    Map<String, Object> o = JsonLine.parseObject("{\"timestamp\": \"82\", \"x\": -1.5e2, "
        + "\"hash_ids\": {\"a\": [1, 2], \"b\": []}, \"s\": \"q\\\"\\u0041\", \"t\": true, \"n\": null}");
    assertThat(JsonLine.longField(o, "timestamp")).isEqualTo(82);
    assertThat(o.get("x")).isEqualTo(-150.0);
    assertThat(((Map<?, ?>) o.get("hash_ids")).get("a")).isEqualTo(List.of(1L, 2L));
    assertThat(o.get("s")).isEqualTo("q\"A");
    assertThat(o.get("t")).isEqualTo(true);
    assertThat(o).containsEntry("n", null);
  }

  @Test
  void refusesTrailingGarbage() {
    assertThatThrownBy(() -> JsonLine.parse("{} x"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected: end of input");
  }
}
