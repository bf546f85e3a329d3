package io.affinityrouter.examples.simulator.strategy;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.examples.simulator.workload.PromptTokens;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class KvEventFeedTest {
  private static final List<Replica> REPLICAS = List.of(Replica.of("replica-0"),
      Replica.of("replica-1"), Replica.of("replica-2"), Replica.of("replica-3"));
  // three 512-token segments and a 100-token tail: 1,636 tokens, 102 full 16-token blocks
  private static final SimRequest PROMPT = new SimRequest(1, null, 0, new long[] {7, 8, 9, 10},
      new int[] {512, 512, 512, 100}, 10, -1);

  private final PromptTokens tokens = new PromptTokens();

  private static Router router() {
    return AffinityRouter.builder().random(new SplittableRandom(1)).build();
  }

  private RoutingDecision select(Router router) {
    return router.select(
        RoutingRequest.builder().promptTokens(tokens.tokens(PROMPT)).build(), REPLICAS);
  }

  @Test
  void storedBlocksReachTheRoutersIndexAndPullThePromptThere() {
    Router router = router();
    KvEventFeed feed = new KvEventFeed(tokens);
    feed.stored(router.cacheEvents(), "replica-2", PROMPT, 0, 1024);
    feed.stored(router.cacheEvents(), "replica-2", PROMPT, 1024, PROMPT.inputTokens());
    RoutingDecision d = select(router);
    assertThat(d.replica().id()).isEqualTo("replica-2");
    assertThat(d.matchedBlocks()).isEqualTo(PROMPT.inputTokens() / 16);
  }

  @Test
  void evictedSegmentsLeaveTheIndexFromTheirFirstBlock() {
    Router router = router();
    KvEventFeed feed = new KvEventFeed(tokens);
    feed.stored(router.cacheEvents(), "replica-3", PROMPT, 0, PROMPT.inputTokens());
    // the tail and the third segment go (vLLM evicts a prompt's tail first)
    feed.evicted(router.cacheEvents(), "replica-3", PROMPT.keys()[3]);
    feed.evicted(router.cacheEvents(), "replica-3", PROMPT.keys()[2]);
    RoutingDecision d = select(router);
    assertThat(d.replica().id()).isEqualTo("replica-3");
    assertThat(d.matchedBlocks()).isEqualTo(1024 / 16);
  }

  @Test
  void aClearedReplicaHoldsNothing() {
    Router router = router();
    KvEventFeed feed = new KvEventFeed(tokens);
    feed.stored(router.cacheEvents(), "replica-1", PROMPT, 0, PROMPT.inputTokens());
    router.cacheEvents().allBlocksCleared("replica-1");
    assertThat(select(router).matchedBlocks()).isZero();
  }
}
