package io.affinityrouter.core.kvevents;

import io.affinityrouter.PrefixCacheEvents;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Turns decoded engine blocks into {@link PrefixCacheEvents} calls in the router's block size.
 * Engine blocks that are a multiple of the router's block pass straight through; smaller ones
 * (SGLang sends one event per page, often of one token) are chained by parent hash until a whole
 * router block exists, which is then stored under the engine hash of its last page. Pending pages
 * are kept by their own engine hash, so a chain may branch inside a router block (two prompts
 * diverging after a few tokens); at most {@value #MAX_PENDING_PAGES} pending pages are kept, the
 * oldest dropped first. Not thread-safe: one per subscription thread.
 */
final class BlockAssembler {
  static final int MAX_PENDING_PAGES = 1 << 16;

  private final PrefixCacheEvents sink;
  private final String replicaId;
  private final int routerBlock;
  private final KvEventCounters counters;
  private final Map<Long, Pending> pending =
      new LinkedHashMap<>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Long, Pending> eldest) {
          return size() > MAX_PENDING_PAGES;
        }
      };
  private int largestBlock;

  BlockAssembler(PrefixCacheEvents sink, String replicaId, int routerBlock,
      KvEventCounters counters) {
    this.sink = sink;
    this.replicaId = replicaId;
    this.routerBlock = routerBlock;
    this.counters = counters;
  }

  /** A {@code BlockStored} of {@code blocks} engine blocks of {@code blockSize} tokens each. */
  void stored(@Nullable String model, @Nullable String tenant, boolean hasParent, long parent,
      long[] hashes, int blocks, int[] tokens, int tokenCount, int blockSize) {
    if (blockSize <= 0 || blocks == 0 || (long) blocks * blockSize != tokenCount) {
      counters.skip(KvEventSkip.MALFORMED_EVENT);
      return;
    }
    if (blockSize < largestBlock && blockSize < routerBlock) {
      counters.skip(KvEventSkip.PARTIAL_PAGE);
      return;
    }
    largestBlock = Math.max(largestBlock, blockSize);
    if (blockSize % routerBlock == 0) {
      apply(model, tenant, hasParent ? parent : null, Arrays.copyOf(hashes, blocks),
          Arrays.copyOf(tokens, tokenCount), blockSize);
    } else if (routerBlock % blockSize != 0) {
      counters.skip(KvEventSkip.UNALIGNED_BLOCK_SIZE);
    } else {
      boolean chained = hasParent;
      long previous = parent;
      for (int b = 0; b < blocks; b++) {
        if (!page(model, tenant, chained, previous, hashes[b], tokens, b * blockSize,
            blockSize)) {
          return;
        }
        chained = true;
        previous = hashes[b];
      }
    }
  }

  private boolean page(@Nullable String model, @Nullable String tenant, boolean hasParent,
      long parent, long hash, int[] tokens, int from, int length) {
    Pending before = hasParent ? pending.get(parent) : null;
    int have = before == null ? 0 : before.tokens;
    if (have + length > routerBlock) {
      counters.skip(KvEventSkip.PARTIAL_PAGE);
      return false;
    }
    boolean groupHasParent = before == null ? hasParent : before.groupHasParent;
    long groupParent = before == null ? parent : before.groupParent;
    if (have + length < routerBlock) {
      pending.put(hash, new Pending(before, Arrays.copyOfRange(tokens, from, from + length),
          have + length, groupHasParent, groupParent));
      return true;
    }
    int[] block = new int[routerBlock];
    System.arraycopy(tokens, from, block, have, length);
    for (Pending p = before; p != null; p = p.previous) {
      System.arraycopy(p.page, 0, block, p.tokens - p.page.length, p.page.length);
    }
    return apply(model, tenant, groupHasParent ? groupParent : null, new long[] {hash}, block,
        routerBlock);
  }

  private boolean apply(@Nullable String model, @Nullable String tenant, @Nullable Long parent,
      long[] hashes, int[] tokens, int blockSize) {
    try {
      sink.blocksStored(replicaId, model, tenant, parent, hashes, tokens, blockSize);
      return true;
    } catch (RuntimeException e) {
      counters.skip(KvEventSkip.SINK_REJECTED);
      return false;
    }
  }

  /** A {@code BlockRemoved}: pending pages are forgotten, the rest goes to the sink. */
  void removed(long[] hashes, int count) {
    for (int i = 0; i < count; i++) {
      pending.remove(hashes[i]);
    }
    try {
      sink.blocksRemoved(replicaId, Arrays.copyOf(hashes, count));
    } catch (RuntimeException e) {
      counters.skip(KvEventSkip.SINK_REJECTED);
    }
  }

  /** An {@code AllBlocksCleared}, or a lost stretch of the stream: the replica's index is dropped. */
  void cleared() {
    pending.clear();
    largestBlock = 0; // a restarted engine may come back with another page size
    try {
      sink.allBlocksCleared(replicaId);
    } catch (RuntimeException e) {
      counters.skip(KvEventSkip.SINK_REJECTED);
    }
  }

  /** One page of an unfinished router block; {@code tokens} counts the block's tokens up to here. */
  private record Pending(@Nullable Pending previous, int[] page, int tokens,
      boolean groupHasParent, long groupParent) {}
}
