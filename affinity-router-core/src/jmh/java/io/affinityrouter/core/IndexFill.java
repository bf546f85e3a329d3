package io.affinityrouter.core;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Fills a router's prefix index to a given number of blocks through the router's own decisions:
 * distinct session-less prompts (random chained hashes, as {@link Router#prehash} would give for
 * prompts that share nothing) are selected and their leases closed, so every block is recorded the
 * way production traffic records it. Reads the index size through the package-private
 * {@code DefaultRouter.index} (benchmarks live in the core's package for that).
 */
final class IndexFill {
  private IndexFill() {}

  /**
   * Selects distinct prompts of {@code promptBlocks} blocks until the index holds at least 98% of
   * {@code targetBlocks} (capped at its bound), or four times the target was inserted.
   *
   * @return the index size afterwards
   */
  static long fill(Router router, List<Replica> replicas, long targetBlocks, int promptBlocks,
      long seed) {
    PrefixIndex index = index(router);
    long target = Math.min(targetBlocks, index.maxEntries());
    SplittableRandom random = new SplittableRandom(seed);
    long[] hashes = new long[promptBlocks];
    long inserted = 0;
    while (index.size() < target * 0.98 && inserted < 4 * target) {
      for (int i = 0; i < promptBlocks; i++) {
        long h = random.nextLong();
        hashes[i] = h == 0 ? 1 : h;
      }
      RoutingRequest request = RoutingRequest.builder()
          .model(Fleet.MODEL)
          .promptBlockHashes(hashes, promptBlocks * BlockSizes.TOKENS_PER_BLOCK)
          .expectedOutputTokens(256)
          .build();
      RoutingDecision d = router.select(request, replicas);
      if (d.isRouted()) {
        d.lease().close();
      }
      inserted += promptBlocks;
    }
    return index.size();
  }

  /** The router's prefix index. */
  static PrefixIndex index(Router router) {
    return ((DefaultRouter) router).index;
  }
}
