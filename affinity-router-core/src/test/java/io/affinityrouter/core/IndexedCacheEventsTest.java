package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.core.Prompts;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Exact KV events steer the router as vLLM's BlockStored/BlockRemoved/AllBlocksCleared would. */
class IndexedCacheEventsTest {
  private final Router router = AffinityRouter.builder().build();
  private final List<Replica> fleet = Prompts.replicas(4);

  private RoutingDecision route(int[] prompt) {
    RoutingDecision d = router.select(RoutingRequest.builder().tenant("t").promptTokens(prompt)
        .build(), fleet);
    d.lease().close();
    return d;
  }

  @Test
  void storedBlocksAttractTheirPromptAndRemovalsUndoIt() {
    int[] prompt = Prompts.tokens(9, 64 * 16);
    long[] engine = new long[64];
    for (int i = 0; i < 64; i++) {
      engine[i] = 1000 + i;
    }
    // Two events, the second chained to the first through the engine's parent hash.
    router.cacheEvents().blocksStored("r3", null, "t", null, Arrays.copyOf(engine, 32),
        Arrays.copyOf(prompt, 512), 16);
    router.cacheEvents().blocksStored("r3", null, "t", engine[31],
        Arrays.copyOfRange(engine, 32, 64), Arrays.copyOfRange(prompt, 512, 1024), 16);
    RoutingDecision d = route(prompt);
    assertThat(d.replica().id()).isEqualTo("r3");
    assertThat(d.matchedBlocks()).isEqualTo(64);

    router.cacheEvents().allBlocksCleared("r3");
    // The router's own decision above recorded r3 too; clearing removes it all.
    router.cacheEvents().blocksStored("r1", null, "t", null, Arrays.copyOf(engine, 16),
        Arrays.copyOf(prompt, 256), 16);
    RoutingDecision after = route(prompt);
    assertThat(after.replica().id()).isEqualTo("r1");
    assertThat(after.matchedBlocks()).isEqualTo(16);
  }

  @Test
  void largerEngineBlocksMapOntoSeveralRouterBlocks() {
    int[] prompt = Prompts.tokens(10, 32 * 8);
    long[] engine = {7, 8, 9, 10, 11, 12, 13, 14};
    router.cacheEvents().blocksStored("r2", null, "t", null, engine, prompt, 32);
    assertThat(route(prompt).matchedBlocks()).isEqualTo(16);
    router.cacheEvents().blocksRemoved("r2", new long[] {13, 14});
    router.cacheEvents().blocksRemoved("r2", new long[] {999}); // unknown: ignored
  }

  @Test
  void aBlockWhoseParentWasNeverStoredIsDroppedAndCounted() {
    io.affinityrouter.core.IndexedCacheEvents events =
        (io.affinityrouter.core.IndexedCacheEvents) router.cacheEvents();
    int[] prompt = Prompts.tokens(11, 32);
    events.blocksStored("r0", null, "t", 424242L, new long[] {1, 2}, prompt, 16);
    assertThat(events.unknownParents()).isEqualTo(1);
    assertThat(route(prompt).matchedBlocks()).isZero();
  }

  @Test
  void inconsistentEventsAreRefused() {
    assertThatThrownBy(() -> router.cacheEvents().blocksStored("r0", null, null, null,
        new long[] {1}, new int[16], 24))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("engineBlockSize: 24 (expected: a positive multiple of the router's block size 16)");
    assertThatThrownBy(() -> router.cacheEvents().blocksStored("r0", null, null, null,
        new long[] {1, 2}, new int[16], 16))
        .hasMessage("tokenIds: 16 (expected: 2 blocks × 16 tokens)");
  }
}
