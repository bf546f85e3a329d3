package io.affinityrouter.examples.simulator.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class AgentSessionGeneratorTest {
  private final AgentSessionGenerator.Config config =
      AgentSessionGenerator.Config.defaults(7).withSessions(50);

  @Test
  void eachTurnRepeatsThePreviousContextItsAnswerAndAToolOutput() {
    Workload w = AgentSessionGenerator.generate(config, "a");
    assertThat(w.heads()).hasSize(50);
    for (SimRequest head : w.heads()) {
      for (SimRequest r = head; r.next() != null; r = r.next()) {
        SimRequest n = r.next();
        int k = r.keys().length;
        assertThat(n.keys().length).isEqualTo(k + 2);
        assertThat(Arrays.copyOf(n.keys(), k)).containsExactly(r.keys());
        assertThat(n.keys()[k]).as("the answer, cached when the turn ends").isEqualTo(r.answerKey());
        assertThat(n.segmentTokens()[k]).isEqualTo(r.outputTokens());
        assertThat(n.session()).isEqualTo(r.session());
      }
    }
  }

  @Test
  void sessionsOfAKindShareTheirSystemPrompt() {
    Workload w = AgentSessionGenerator.generate(config, "a");
    long kinds = w.heads().stream().mapToLong(r -> r.keys()[0]).distinct().count();
    assertThat(kinds).isBetween(2L, (long) config.kinds());
  }

  @Test
  void theHotShareConcentratesSessionsOnOneKind() {
    Workload w = AgentSessionGenerator.generate(config.withSessions(400).withHotShare(0.6), "h");
    long hot = w.heads().stream().filter(r -> r.segmentIds()[0] == (10L << 40)).count();
    assertThat(hot).isGreaterThan(400 * 6 / 10);
  }

  @Test
  void isDeterministicUnderItsSeed() {
    Workload a = AgentSessionGenerator.generate(config, "a");
    Workload b = AgentSessionGenerator.generate(config, "a");
    assertThat(a.allRequests()).hasSameSizeAs(b.allRequests());
    for (int i = 0; i < a.allRequests().size(); i++) {
      SimRequest x = a.allRequests().get(i);
      SimRequest y = b.allRequests().get(i);
      assertThat(x.keys()).containsExactly(y.keys());
      assertThat(x.delayNanos()).isEqualTo(y.delayNanos());
    }
  }

  @Test
  void refusesInvertedRanges() {
    assertThatThrownBy(() -> new AgentSessionGenerator.Config(1, 1, 1, 0, 1, 1, 5, 4, 1, 1, 1, 1,
        0, 1)).isInstanceOf(IllegalArgumentException.class).hasMessage("maxTurns: 4 (expected: >= 5)");
  }
}
