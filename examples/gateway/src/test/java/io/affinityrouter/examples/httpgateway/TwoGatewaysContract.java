package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.RoutingReason;
import io.affinityrouter.examples.fakevllm.FakeVllmConfig;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two gateways sharing session bindings, three fake backends, multi-turn sessions alternating
 * between the gateways. Subclasses say how the bindings are shared (one in-memory store in this
 * JVM, or a real redis-server).
 */
abstract class TwoGatewaysContract {
  static final int SESSIONS = 12;
  static final int TURNS = 10;

  TestFleet fleet;

  /** Starts one of the two gateways in front of {@code fleet}'s backends, sharing bindings. */
  abstract Gateway startGateway(TestFleet fleet);

  List<Gateway> startFleet() {
    // ~8 ms prefill of a cold prompt, 1 ms per output token: requests are in flight at a kill.
    fleet = TestFleet.start(3, FakeVllmConfig.builder().micros(20, 1000));
    return List.of(startGateway(fleet), startGateway(fleet));
  }

  @AfterEach
  void closeFleet() {
    if (fleet != null) {
      fleet.close();
    }
  }

  @Test
  void alternatingSessionsLandEveryTurnOnOneBackend() throws Exception {
    List<Gateway> gateways = startFleet();
    Map<String, List<AlternatingSessions.Turn>> runs =
        new AlternatingSessions(gateways, SESSIONS, TURNS).run(0, null);
    for (List<AlternatingSessions.Turn> turns : runs.values()) {
      assertThat(turns).hasSize(TURNS).allSatisfy(t -> assertThat(t.status()).isEqualTo(200));
      assertThat(replicas(turns)).as("%s", turns).hasSize(1);
      assertThat(turns.get(0).reason()).isEqualTo(RoutingReason.SESSION_CLAIMED.name());
      assertThat(turns.subList(1, TURNS)).allSatisfy(t -> assertThat(t.reason())
          .isEqualTo(RoutingReason.SESSION_AFFINITY.name()));
    }
    assertThat(runs.values().stream().map(t -> t.get(0).replica()).distinct().count())
        .as("sessions spread over the backends").isGreaterThan(1);
    for (Gateway g : gateways) {
      assertThat(TestFleet.await(() -> g.openLeases() == 0)).isTrue();
    }
  }

  @Test
  void backendKilledMidRunRepinsItsSessionsOnce() throws Exception {
    List<Gateway> gateways = startFleet();
    AlternatingSessions run = new AlternatingSessions(gateways, SESSIONS, TURNS);
    // Kill whichever backend serves session-0, once 4 turns per session are done.
    String[] dead = new String[1];
    Map<String, List<AlternatingSessions.Turn>> runs = run.run(SESSIONS * 4, () -> {
      dead[0] = run.firstReplica("session-0");
      fleet.backend(dead[0]).close();
    });
    assertThat(dead[0]).isNotNull();
    int moved = 0;
    for (List<AlternatingSessions.Turn> turns : runs.values()) {
      assertThat(turns).hasSize(TURNS);
      for (AlternatingSessions.Turn t : turns) {
        if (t.is5xx()) {
          assertThat(t.replica()).as("a 5xx only from the dead backend: %s", t).isEqualTo(dead[0]);
          assertThat(t.startNanos()).as("a 5xx only in flight at the kill: %s", t)
              .isLessThan(run.disruptionEnd());
        }
      }
      String first = turns.get(0).replica();
      List<AlternatingSessions.Turn> ok = turns.stream().filter(t -> t.status() == 200)
          .collect(Collectors.toList());
      if (!first.equals(dead[0])) {
        assertThat(replicas(ok)).as("untouched session %s", turns).containsExactly(first);
        continue;
      }
      moved++;
      List<AlternatingSessions.Turn> after = ok.stream()
          .filter(t -> !t.replica().equals(dead[0])).collect(Collectors.toList());
      assertThat(after).as("turns after the kill of %s", turns).isNotEmpty();
      assertThat(ok.subList(0, ok.size() - after.size())).as("%s", turns)
          .allSatisfy(t -> assertThat(t.replica()).isEqualTo(dead[0]));
      assertThat(replicas(after)).as("repinned once, to one live backend: %s", turns).hasSize(1);
      assertThat(after.get(0).reason()).isEqualTo(RoutingReason.SESSION_REPINNED.name());
      assertThat(after.stream().filter(
          t -> t.reason().equals(RoutingReason.SESSION_REPINNED.name())).count()).isEqualTo(1);
    }
    long failed = runs.values().stream().flatMap(List::stream)
        .filter(AlternatingSessions.Turn::is5xx).count();
    System.out.printf("killed %s: %d sessions repinned, %d in-flight requests failed, kill took %d ms%n",
        dead[0], moved, failed, (run.disruptionEnd() - run.disruptionStart()) / 1_000_000);
    assertThat(moved).as("sessions that were on the dead backend").isPositive();
    for (Gateway g : gateways) {
      assertThat(TestFleet.await(() -> g.openLeases() == 0)).isTrue();
    }
  }

  static List<String> replicas(List<AlternatingSessions.Turn> turns) {
    return turns.stream().map(AlternatingSessions.Turn::replica).distinct()
        .collect(Collectors.toList());
  }
}
