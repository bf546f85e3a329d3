package io.affinityrouter.core;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.affinityrouter.PrefixCacheEvents;
import java.util.Objects;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.ToLongFunction;
import org.jspecify.annotations.Nullable;

/**
 * Applies engine KV-cache events to a {@link PrefixIndex}. Engine block hashes are mapped to the
 * router's own chained hashes (computed from each stored block's token ids with {@link BlockHasher}),
 * through a bounded map (Caffeine, size-bounded like the index) keyed by replica and engine hash.
 *
 * <p>A {@code BlockStored} whose parent the map does not know (its store event was missed or
 * evicted) cannot be chained and is dropped, counted by {@link #unknownParents()}. Thread-safe.
 */
final class IndexedCacheEvents implements PrefixCacheEvents {
  private final PrefixIndex index;
  private final BlockHasher hasher;
  private final ToLongFunction<String> ordinals;
  private final Cache<Long, long[]> engineToRouter;
  private final LongAdder unknownParents = new LongAdder();

  /**
   * Creates an adapter.
   *
   * @param ordinals maps a replica id to its ordinal in the index and the ordinal's incarnation
   *     ({@link ReplicaState#eventsKey()}), or {@link LoadTracker#NO_ORDINAL}
   */
  IndexedCacheEvents(PrefixIndex index, BlockHasher hasher, ToLongFunction<String> ordinals,
      long maxMappings) {
    this.index = index;
    this.hasher = hasher;
    this.ordinals = ordinals;
    this.engineToRouter = Caffeine.newBuilder().maximumSize(maxMappings)
        .executor(Runnable::run).build();
  }

  @Override
  public void blocksStored(String replicaId, @Nullable String model, @Nullable String tenant,
      @Nullable Long parentEngineHash,
      long[] engineBlockHashes, int[] tokenIds, int engineBlockSize) {
    Objects.requireNonNull(engineBlockHashes, "engineBlockHashes");
    Objects.requireNonNull(tokenIds, "tokenIds");
    int routerBlock = hasher.tokenBlockSize();
    if (engineBlockSize <= 0 || engineBlockSize % routerBlock != 0) {
      throw new IllegalArgumentException("engineBlockSize: " + engineBlockSize
          + " (expected: a positive multiple of the router's block size " + routerBlock + ")");
    }
    if ((long) engineBlockHashes.length * engineBlockSize != tokenIds.length) {
      throw new IllegalArgumentException("tokenIds: " + tokenIds.length + " (expected: "
          + engineBlockHashes.length + " blocks × " + engineBlockSize + " tokens)");
    }
    long slot = ordinals.applyAsLong(Objects.requireNonNull(replicaId, "replicaId"));
    if (slot == LoadTracker.NO_ORDINAL) {
      return;
    }
    int ordinal = (int) (slot & 0xFFF);
    long h;
    if (parentEngineHash == null) {
      h = hasher.chainSeed(model == null ? "" : model, tenant == null ? "" : tenant);
    } else {
      long[] parent = engineToRouter.getIfPresent(key(slot, parentEngineHash));
      if (parent == null) {
        unknownParents.increment();
        return;
      }
      h = parent[parent.length - 1];
    }
    int perEngineBlock = engineBlockSize / routerBlock;
    for (int b = 0; b < engineBlockHashes.length; b++) {
      long[] mine = new long[perEngineBlock];
      for (int j = 0; j < perEngineBlock; j++) {
        h = hasher.hashTokenBlock(h, tokenIds, b * engineBlockSize + j * routerBlock, routerBlock);
        mine[j] = h;
        index.add(h, ordinal);
      }
      engineToRouter.put(key(slot, engineBlockHashes[b]), mine);
    }
  }

  @Override
  public void blocksRemoved(String replicaId, long[] engineBlockHashes) {
    Objects.requireNonNull(engineBlockHashes, "engineBlockHashes");
    long slot = ordinals.applyAsLong(Objects.requireNonNull(replicaId, "replicaId"));
    if (slot == LoadTracker.NO_ORDINAL) {
      return;
    }
    int ordinal = (int) (slot & 0xFFF);
    for (long engineHash : engineBlockHashes) {
      Long k = key(slot, engineHash);
      long[] mine = engineToRouter.getIfPresent(k);
      if (mine != null) {
        engineToRouter.invalidate(k);
        for (long h : mine) {
          index.remove(h, ordinal);
        }
      }
    }
  }

  @Override
  public void allBlocksCleared(String replicaId) {
    long slot = ordinals.applyAsLong(Objects.requireNonNull(replicaId, "replicaId"));
    if (slot != LoadTracker.NO_ORDINAL) {
      index.removeAll((int) (slot & 0xFFF));
    }
  }

  /** {@code BlockStored} events dropped because their parent block was unknown. */
  long unknownParents() {
    return unknownParents.sum();
  }

  private static Long key(long slot, long engineHash) {
    return BlockHasher.fmix(engineHash + 0x9E3779B97F4A7C15L * (slot + 1));
  }

  @Override
  public int tokensPerBlock() {
    return hasher.tokenBlockSize();
  }
}
