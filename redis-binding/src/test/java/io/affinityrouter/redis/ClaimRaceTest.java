package io.affinityrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.redis.testing.RedisServerExtension;
import io.affinityrouter.redis.testing.Windowed;
import io.affinityrouter.spi.Binding;
import io.affinityrouter.spi.BindingKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Four stores, each with its own Lettuce client, race on the first claim of 10,000 sessions and
 * then make 10 more calls each: every session ends on exactly one replica, claimed exactly once.
 */
class ClaimRaceTest {

  private static final int SESSIONS = 10_000;
  private static final int GATEWAYS = 4;
  private static final int TURNS = 10;
  @RegisterExtension
  static final RedisServerExtension redis = new RedisServerExtension();

  @ParameterizedTest(name = "local cache size {0}")
  @ValueSource(longs = {0, 20_000})
  void racingGatewaysAllAdoptOneWinner(long cacheSize) throws Exception {
    redis.server().cli("flushall");
    List<RedisBindingStore> stores = new ArrayList<>();
    for (int g = 0; g < GATEWAYS; g++) {
      stores.add(RedisBindingStore.builder().uri(redis.uri())
          .commandTimeout(Duration.ofSeconds(2)).localCacheSize(cacheSize).build());
    }
    ExecutorService pool = Executors.newFixedThreadPool(GATEWAYS);
    try {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<List<AtomicReferenceArray<Binding>>>> runs = new ArrayList<>();
      for (int g = 0; g < GATEWAYS; g++) {
        RedisBindingStore store = stores.get(g);
        String candidate = "replica-" + g;
        runs.add(pool.submit(() -> {
          go.await();
          List<AtomicReferenceArray<Binding>> turns = new ArrayList<>();
          for (int t = 0; t <= TURNS; t++) {
            turns.add(Windowed.run(SESSIONS, 256, i -> store.getOrClaim(
                new BindingKey("m", "t", "session-" + i), candidate, Duration.ofMinutes(5))));
          }
          return turns;
        }));
      }
      go.countDown();
      List<List<AtomicReferenceArray<Binding>>> results = new ArrayList<>();
      for (Future<List<AtomicReferenceArray<Binding>>> run : runs) {
        results.add(run.get());
      }

      int splitSessions = 0;
      int claimsTotal = 0;
      for (int i = 0; i < SESSIONS; i++) {
        String replica = null;
        boolean split = false;
        int claims = 0;
        for (List<AtomicReferenceArray<Binding>> gateway : results) {
          for (AtomicReferenceArray<Binding> turn : gateway) {
            Binding b = turn.get(i);
            assertThat(b).as("session %d", i).isNotNull();
            if (replica == null) {
              replica = b.replicaId();
            } else if (!replica.equals(b.replicaId())) {
              split = true;
            }
            claims += b.written() ? 1 : 0;
          }
        }
        splitSessions += split ? 1 : 0;
        claimsTotal += claims;
        assertThat(claims).as("claims of session %d", i).isEqualTo(1);
      }
      System.out.printf("race (cache %d): %d sessions x %d gateways x %d calls, sessions on more"
          + " than one replica: %d, claims: %d%n", cacheSize, SESSIONS, GATEWAYS, TURNS + 1,
          splitSessions, claimsTotal);
      assertThat(splitSessions).isZero();
      assertThat(claimsTotal).isEqualTo(SESSIONS);
      assertThat(redis.server().cli("dbsize")).isEqualTo(Integer.toString(SESSIONS));
    } finally {
      pool.shutdownNow();
      stores.forEach(RedisBindingStore::close);
    }
  }
}
