package io.affinityrouter.examples.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;
import org.junit.jupiter.api.Test;

class FlagsTest {

  @Test
  void readsBothFormsAndRepeats() {
    Flags f = Flags.parse(new String[] {"--port", "8001", "--backend=a=http://x:1",
        "--backend", "b=http://y:2", "--scale=0.5"}, Set.of("port", "backend", "scale", "model"));
    assertThat(f.integer("port", 0)).isEqualTo(8001);
    assertThat(f.all("backend")).containsExactly("a=http://x:1", "b=http://y:2");
    assertThat(f.number("scale", 1)).isEqualTo(0.5);
    assertThat(f.string("model", "dflt")).isEqualTo("dflt");
    assertThat(f.has("model")).isFalse();
  }

  @Test
  void switchesTakeNoValue() {
    Flags f = Flags.parse(new String[] {"--load", "--port", "1"}, Set.of("port"), Set.of("load"));
    assertThat(f.has("load")).isTrue();
    assertThat(f.integer("port", 0)).isEqualTo(1);
    assertThatThrownBy(() -> Flags.parse(new String[] {"--port", "--load"}, Set.of("port"),
        Set.of("load"))).hasMessage("--port: no value (expected: --port value)");
  }

  @Test
  void refusesWhatItDoesNotKnow() {
    assertThatThrownBy(() -> Flags.parse(new String[] {"--nope", "1"}, Set.of("port")))
        .isInstanceOf(IllegalArgumentException.class).hasMessageStartingWith("--nope: unknown flag");
    assertThatThrownBy(() -> Flags.parse(new String[] {"positional"}, Set.of("port")))
        .hasMessage("argument: positional (expected: --flag value)");
    assertThatThrownBy(() -> Flags.parse(new String[] {"--port"}, Set.of("port")))
        .hasMessage("--port: no value (expected: --port value)");
    Flags f = Flags.parse(new String[] {"--port", "x"}, Set.of("port"));
    assertThatThrownBy(() -> f.integer("port", 1)).hasMessage("--port: x (expected: an integer)");
    assertThatThrownBy(() -> f.number("port", 1)).hasMessage("--port: x (expected: a number)");
  }
}
