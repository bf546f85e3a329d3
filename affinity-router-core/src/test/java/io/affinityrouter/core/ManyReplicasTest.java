package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Past the index's ordinal space, replicas still route and limit; they just match no prefix. */
class ManyReplicasTest {
  @Test
  void replicasBeyondTheOrdinalSpaceStillRoute() {
    Router router = AffinityRouter.builder().prefixIndexEntries(4096).build();
    int total = PrefixIndex.MAX_ORDINALS + 100;
    List<Replica> batch = new ArrayList<>();
    for (int i = 0; i < total; i++) {
      batch.add(Replica.builder("replica-" + i).maxInFlightRequests(1).build());
    }
    // Every replica takes one request (limit 1), including those without an ordinal.
    for (int i = 0; i < total; i++) {
      RoutingDecision d = router.select(Prompts.anonymous(Prompts.tokens(i, 32)), batch);
      assertThat(d.isRouted()).as("request %d", i).isTrue();
    }
    assertThat(router.select(Prompts.anonymous(Prompts.tokens(1, 32)), batch).isRouted())
        .isFalse();
  }
}
