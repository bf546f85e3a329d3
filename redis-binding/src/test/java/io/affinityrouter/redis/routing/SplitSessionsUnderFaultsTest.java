package io.affinityrouter.redis.routing;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.core.FaultyBindingStore;
import io.affinityrouter.core.SessionSplitHarness;
import io.affinityrouter.redis.RedisBindingStore;
import io.affinityrouter.redis.testing.RedisServerExtension;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The pinning promise under injected faults on real Redis: four routers, each with its own
 * {@link RedisBindingStore} (own Lettuce client) at the library's default timeouts, conflicting
 * candidates, 2,000 sessions; a seeded share of the answers late, lost or failed after the script
 * ran. Once every router has heard the store's answer, no session is split and every later turn
 * goes to the replica Redis holds.
 */
class SplitSessionsUnderFaultsTest {
  @RegisterExtension
  static final RedisServerExtension redis = new RedisServerExtension();

  @Test
  void onceEveryRouterHeardRedisNoSessionIsSplit() throws Exception {
    List<FaultyBindingStore> views = new ArrayList<>();
    List<RedisBindingStore> stores = new ArrayList<>();
    try (RedisBindingStore truth = RedisBindingStore.builder().uri(redis.uri()).build()) {
      for (int g = 0; g < 4; g++) {
        RedisBindingStore store = RedisBindingStore.builder().uri(redis.uri()).build();
        stores.add(store);
        views.add(new FaultyBindingStore(store, 100 + g, 0.04, 0.02, 0.03));
      }
      SessionSplitHarness.Result r = SessionSplitHarness.run(views, truth, 2_000, 7);
      System.out.println("Redis, 4 routers: " + r);
      // How many answers a busy machine's routers ask for varies (an open breaker asks none);
      // the faults are the seeded share of those, and enough of them to matter.
      int drawn = views.stream().mapToInt(v -> v.drawn.get()).sum();
      int faults = r.late() + r.lost() + r.failed();
      assertThat(faults).as("faults injected").isGreaterThan(100)
          .isGreaterThan((int) (0.06 * drawn));
      // the stores' counters (corrupt values, failures) belong to the diagnosis of a split
      List<String> counted = stores.stream().map(st -> st.stats().toString()).toList();
      assertThat(r.laterSplits()).as("sessions split in later turns: %s; stores: %s", r, counted)
          .isZero();
      assertThat(r.laterOffStore()).as("later turns off Redis's replica").isZero();
      assertThat(r.laterReconciled()).as("reconciliations overriding Redis").isZero();
    } finally {
      stores.forEach(RedisBindingStore::close);
    }
  }
}
