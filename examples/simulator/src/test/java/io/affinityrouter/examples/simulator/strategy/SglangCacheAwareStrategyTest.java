package io.affinityrouter.examples.simulator.strategy;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.examples.simulator.strategy.SglangCacheAwareStrategy.Miss;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SglangCacheAwareStrategyTest {
  private long nextId;

  /** A prompt of one 1,000-token segment no other prompt shares. */
  private SimRequest cold() {
    long id = ++nextId;
    return new SimRequest(id, null, 0, new long[] {1_000_000 + id}, new int[] {1000}, 10, -1);
  }

  private SimRequest prompt(long... segmentIds) {
    int[] tokens = new int[segmentIds.length];
    Arrays.fill(tokens, 500);
    return new SimRequest(++nextId, null, 0, segmentIds, tokens, 10, -1);
  }

  @Test
  void aMissGoesToTheLeastLoadedWorkerNotTheSmallestTree() {
    SglangCacheAwareStrategy s = new SglangCacheAwareStrategy(1, Miss.LEAST_LOADED);
    FakeFleet fleet = new FakeFleet(3).inFlight(0, 10, 10);
    assertThat(s.route(cold(), fleet)).isEqualTo(Route.of(0, "least-loaded"));
    // replica 0 now has the largest tree and is still the least loaded
    fleet.inFlight(2, 10, 10);
    assertThat(s.treeTokens(0)).isGreaterThan(s.treeTokens(1));
    assertThat(s.route(cold(), fleet)).isEqualTo(Route.of(0, "least-loaded"));
  }

  @Test
  void the2025RuleSendsAMissToTheSmallestTree() {
    SglangCacheAwareStrategy s = new SglangCacheAwareStrategy(1, Miss.SMALLEST_TREE);
    FakeFleet fleet = new FakeFleet(3).inFlight(0, 10, 10);
    assertThat(s.route(cold(), fleet)).isEqualTo(Route.of(0, "smallest-tree"));
    fleet.inFlight(2, 10, 10);
    // replicas 1 and 2 hold no tree; the first of them wins though both are busier
    assertThat(s.route(cold(), fleet)).isEqualTo(Route.of(1, "smallest-tree"));
  }

  @Test
  void missesSpreadOverEquallyLoadedWorkers() {
    SglangCacheAwareStrategy s = new SglangCacheAwareStrategy(7, Miss.LEAST_LOADED);
    FakeFleet fleet = new FakeFleet(4);
    Set<Integer> chosen = new HashSet<>();
    for (int i = 0; i < 100; i++) {
      chosen.add(s.route(cold(), fleet).replicaIndex());
    }
    assertThat(chosen).containsExactlyInAnyOrder(0, 1, 2, 3);
  }

  @Test
  void aMatchAboveTheThresholdStaysWithItsWorkerWhileBalanced() {
    SglangCacheAwareStrategy s = new SglangCacheAwareStrategy(1, Miss.LEAST_LOADED);
    FakeFleet fleet = new FakeFleet(2).inFlight(0, 5);
    assertThat(s.route(prompt(1, 2), fleet).replicaIndex()).isEqualTo(0);
    // 64 more in flight is not yet imbalance; half the prompt matches replica 0
    fleet.inFlight(64, 0);
    assertThat(s.route(prompt(1, 3), fleet)).isEqualTo(Route.of(0, "prefix"));
  }

  @Test
  void imbalanceGoesToTheFirstLeastLoadedWorker() {
    SglangCacheAwareStrategy s = new SglangCacheAwareStrategy(1, Miss.LEAST_LOADED);
    FakeFleet fleet = new FakeFleet(3).inFlight(0, 1, 1);
    assertThat(s.route(prompt(9, 10), fleet).replicaIndex()).isEqualTo(0);
    // the prompt's worker is 65 requests ahead: the first of the two idle ones, every time
    fleet.inFlight(65, 0, 0);
    for (int i = 0; i < 20; i++) {
      assertThat(s.route(prompt(9, 10), fleet)).isEqualTo(Route.of(1, "imbalance"));
    }
  }
}
