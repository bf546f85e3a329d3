package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.RoutingReason;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The two-gateway contract with each gateway's router on its own Redis binding store (the
 * {@code --redis} flag: the {@code "redis"} provider) against one real {@code redis-server}; plus
 * a Redis outage in the middle of a run.
 */
class RedisGatewaysTest extends TwoGatewaysContract {
  private static final long STORE_TIMEOUT_MS = 1000;
  private RedisServer redis;

  @BeforeEach
  void startRedis() {
    redis = RedisServer.start();
  }

  @AfterEach
  void stopRedis() {
    if (fleet != null) {
      fleet.close();
      fleet = null;
    }
    redis.close();
  }

  @Override
  Gateway startGateway(TestFleet fleet) {
    // A generous store timeout: on a loaded 2-core test machine a 50 ms budget (the default)
    // sends turns to the degraded fallback while Redis is up.
    return fleet.gateway(fleet.config().redisUri(redis.uri())
        .storeTimeout(Duration.ofMillis(STORE_TIMEOUT_MS)), null);
  }

  @Test
  void redisStoppedMidRunGivesNo5xxAndSessionsKeepTheirReplica() throws Exception {
    List<Gateway> gateways = startFleet();
    AlternatingSessions run = new AlternatingSessions(gateways, SESSIONS, TURNS);
    long[] keysBefore = new long[1];
    Map<String, List<AlternatingSessions.Turn>> runs = run.run(SESSIONS * 4, () -> {
      keysBefore[0] = Long.parseLong(redis.cli("dbsize"));
      redis.stop();
    });
    assertThat(keysBefore[0]).as("bindings were in Redis").isGreaterThanOrEqualTo(SESSIONS);
    int moved = 0;
    int degradedTurns = 0;
    for (List<AlternatingSessions.Turn> turns : runs.values()) {
      assertThat(turns).hasSize(TURNS)
          .allSatisfy(t -> assertThat(t.status()).as("%s", t).isEqualTo(200));
      List<AlternatingSessions.Turn> degraded = turns.stream()
          .filter(t -> t.reason().equals(RoutingReason.DEGRADED_FALLBACK.name()))
          .collect(Collectors.toList());
      degradedTurns += degraded.size();
      assertThat(replicas(degraded)).as("both gateways agree without Redis: %s", turns)
          .hasSizeLessThanOrEqualTo(1);
      List<String> path = turns.stream().map(AlternatingSessions.Turn::replica)
          .collect(Collectors.toList());
      int changes = 0;
      for (int i = 1; i < path.size(); i++) {
        changes += path.get(i).equals(path.get(i - 1)) ? 0 : 1;
      }
      assertThat(changes).as("the degraded fallback keeps the last confirmed replica: %s", turns)
          .isZero();
      moved += changes;
      // Turns that started after the outage began and ended degraded stay degraded (no flapping).
      int firstDegraded = turns.indexOf(degraded.isEmpty() ? null : degraded.get(0));
      if (firstDegraded >= 0) {
        assertThat(turns.subList(firstDegraded, TURNS)).allSatisfy(t -> assertThat(t.reason())
            .isEqualTo(RoutingReason.DEGRADED_FALLBACK.name()));
      }
    }
    List<AlternatingSessions.Turn> afterOutage = runs.values().stream().flatMap(List::stream)
        .filter(t -> t.startNanos() > run.disruptionEnd()).collect(Collectors.toList());
    assertThat(afterOutage).as("turns sent once Redis was down").isNotEmpty()
        .allSatisfy(t -> assertThat(t.reason()).as("%s", t)
            .isEqualTo(RoutingReason.DEGRADED_FALLBACK.name()));
    System.out.printf("redis stopped: %d degraded turns (%d sent after the kill), %d of %d "
        + "sessions moved%n", degradedTurns, afterOutage.size(), moved,
        SESSIONS);
    for (Gateway g : gateways) {
      assertThat(TestFleet.await(() -> g.openLeases() == 0)).isTrue();
    }
  }
}
