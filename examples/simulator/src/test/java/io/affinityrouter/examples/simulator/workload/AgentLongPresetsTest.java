package io.affinityrouter.examples.simulator.workload;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.examples.simulator.SimulatorOptions;
import io.affinityrouter.examples.simulator.WorkloadFactory;
import io.affinityrouter.examples.simulator.fleet.EngineConfig;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The long-context agent presets: their ranges, hot family, determinism and KV working set. */
class AgentLongPresetsTest {
  private static final AgentSessionGenerator.Config LONG =
      AgentSessionGenerator.Config.agentsLong(42);
  private static final AgentSessionGenerator.Config PRESSURE =
      AgentSessionGenerator.Config.agentsLongPressure(42);

  @Test
  void sessionsStayWithinThePresetsRanges() {
    for (AgentSessionGenerator.Config c : List.of(LONG, PRESSURE, LONG.withSessions(200)
        .withHotShare(0))) {
      Workload w = AgentSessionGenerator.generate(c, "long");
      assertThat(w.heads()).hasSize(c.sessions());
      Map<Long, Integer> systemPromptByKind = new HashMap<>();
      for (SimRequest head : w.heads()) {
        int turns = 0;
        SimRequest last = head;
        for (SimRequest r = head; r != null; r = r.next()) {
          turns++;
          last = r;
          if (r != head) {
            assertThat(r.delayNanos()).as("think time").isBetween(2_000_000_000L, 12_000_000_000L)
                .isBetween(Math.round(c.minThinkMillis() * 1e6), Math.round(c.maxThinkMillis() * 1e6));
          }
          if (r.next() != null) {
            SimRequest n = r.next();
            int k = r.keys().length;
            // the next turn repeats this one's prompt, then its answer and a tool output
            assertThat(Arrays.copyOf(n.keys(), k)).containsExactly(r.keys());
            assertThat(n.keys()[k]).isEqualTo(r.answerKey());
            assertThat(n.segmentTokens()[k]).isEqualTo(r.outputTokens());
            assertThat(n.segmentTokens()[k + 1]).isGreaterThanOrEqualTo(c.minToolTokens());
          }
          assertThat(r.outputTokens()).isBetween(c.minAnswerTokens(), c.maxAnswerTokens());
        }
        assertThat(turns).isBetween(20, 60).isBetween(c.minTurns(), c.maxTurns());
        assertThat(last.inputTokens()).as("the context at the last turn")
            .isBetween(30_000, 70_000).isBetween(c.minContextTokens(), c.maxContextTokens());
        int systemPrompt = head.segmentTokens()[0];
        assertThat(systemPrompt).isBetween(3000, 10_000);
        Integer before = systemPromptByKind.putIfAbsent(head.keys()[0], systemPrompt);
        assertThat(before).as("one size per kind").isIn(null, systemPrompt);
      }
      assertThat(systemPromptByKind.values().stream().distinct().count())
          .as("each kind draws its own size").isGreaterThan(1);
    }
  }

  @Test
  void aHotFamilyTakesItsShareOfTheSessions() {
    for (AgentSessionGenerator.Config c : List.of(LONG, PRESSURE)) {
      Workload w = AgentSessionGenerator.generate(c, "long");
      double hot = w.heads().stream().filter(r -> r.segmentIds()[0] == (10L << 40)).count()
          / (double) c.sessions();
      // the hot share, plus the hot kind's part of the uniform draws
      double expected = c.hotShare() + (1 - c.hotShare()) / c.kinds();
      double sd = Math.sqrt(expected * (1 - expected) / c.sessions());
      assertThat(hot).as("share of kind 0").isBetween(expected - 4 * sd, expected + 4 * sd);
    }
    assertThat(LONG.hotShare()).isEqualTo(0.6);
    assertThat(PRESSURE.hotShare()).isEqualTo(0.3);
  }

  @Test
  void isDeterministicUnderItsSeed() {
    AgentSessionGenerator.Config c = LONG.withSessions(60);
    List<SimRequest> a = AgentSessionGenerator.generate(c, "a").allRequests();
    List<SimRequest> b = AgentSessionGenerator.generate(c, "a").allRequests();
    assertThat(a).hasSameSizeAs(b);
    for (int i = 0; i < a.size(); i++) {
      assertThat(a.get(i).keys()).containsExactly(b.get(i).keys());
      assertThat(a.get(i).segmentTokens()).containsExactly(b.get(i).segmentTokens());
      assertThat(a.get(i).outputTokens()).isEqualTo(b.get(i).outputTokens());
      assertThat(a.get(i).delayNanos()).isEqualTo(b.get(i).delayNanos());
    }
    List<SimRequest> other = AgentSessionGenerator.generate(
        AgentSessionGenerator.Config.agentsLong(43).withSessions(60), "a").allRequests();
    assertThat(other.stream().mapToLong(SimRequest::inputTokens).sum())
        .isNotEqualTo(a.stream().mapToLong(SimRequest::inputTokens).sum());
  }

  /**
   * The pressure preset at 50 requests per second holds more than twice the fleet's KV in the
   * contexts of the sessions active at once, when every turn is answered at once and the next
   * follows after its think time.
   */
  @Test
  void thePressurePresetsWorkingSetIsTwiceTheFleetsKv() {
    SimulatorOptions o = SimulatorOptions.parse(new String[] {"--rate", "50"});
    EngineConfig engine = EngineConfig.defaults().withKvBlocks(o.kvBlocks());
    Workload w = WorkloadFactory.build("agents-long-pressure", o, engine, o.replicas(), s -> { });
    assertThat(w.heads()).hasSize(AgentSessionGenerator.PRESSURE_SESSIONS);
    long fleetKvTokens = o.replicas() * engine.kvCapacityTokens();
    assertThat(fleetKvTokens).isEqualTo(8L * 67_659 * 16);
    assertThat(peakWorkingSet(w)).isGreaterThanOrEqualTo(2 * fleetKvTokens);
  }

  /**
   * The most context tokens the active sessions hold at one time: a session holds its latest turn's
   * prompt from that turn's arrival (its first at the head's arrival, each next one its think time
   * later, service taking no time) until its last turn arrives. Shared system prompts count once per
   * session, as each session's context.
   */
  static long peakWorkingSet(Workload w) {
    List<long[]> changes = new ArrayList<>(); // {time, token change, 0 = arrival / 1 = end}
    for (SimRequest head : w.heads()) {
      long t = head.delayNanos();
      int held = 0;
      for (SimRequest r = head; r != null; r = r.next()) {
        t += r == head ? 0 : r.delayNanos();
        changes.add(new long[] {t, r.inputTokens() - held, 0});
        held = r.inputTokens();
      }
      changes.add(new long[] {t, -held, 1});
    }
    // at equal times, arrivals before ends: a session's last context counts at its arrival
    changes.sort(Comparator.<long[]>comparingLong(c -> c[0]).thenComparingLong(c -> c[2]));
    long now = 0;
    long peak = 0;
    for (long[] c : changes) {
      now += c[1];
      peak = Math.max(peak, now);
    }
    return peak;
  }

  @Test
  void refusesATargetTooSmallForItsTurns() {
    assertThatThrownBy(() -> new AgentSessionGenerator.Config(1, 1, 1, 0, 3000, 10_000, 300, 20,
        60, 50, 50, 30, 300, 30_000, 70_000, 0, 2000, 12_000, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("minContextTokens: 30000 (expected: >= maxSystemPromptTokens + taskTokens"
            + " + (maxTurns - 1) x (maxAnswerTokens + minToolTokens) = 30950)");
    assertThatThrownBy(() -> new AgentSessionGenerator.Config(1, 1, 1, 0, 3000, 2000, 300, 20,
        60, 50, 50, 30, 300, 0, 0, 0, 2000, 12_000, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxSystemPromptTokens: 2000 (expected: >= 3000)");
    assertThatThrownBy(() -> new AgentSessionGenerator.Config(1, 1, 1, 0, 3000, 3000, 300, 20,
        60, 50, 50, 30, 300, 0, 0, 0, 2000, 1000, 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("maxThinkMillis: 1000.0 (expected: >= 2000.0)");
  }
}
