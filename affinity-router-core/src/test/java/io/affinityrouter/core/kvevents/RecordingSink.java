package io.affinityrouter.core.kvevents;

import io.affinityrouter.PrefixCacheEvents;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** A sink that records every call, as text a test can compare. Thread-safe. */
final class RecordingSink implements PrefixCacheEvents {
  private final List<String> calls = new ArrayList<>();
  private final int tokensPerBlock;

  RecordingSink() {
    this(16);
  }

  RecordingSink(int tokensPerBlock) {
    this.tokensPerBlock = tokensPerBlock;
  }

  @Override
  public int tokensPerBlock() {
    return tokensPerBlock;
  }

  static String stored(String replica, @Nullable String model, @Nullable Long parent,
      long[] hashes, int[] tokens, int blockSize) {
    return "stored " + replica + " model=" + model + " parent=" + unsigned(parent) + " hashes="
        + unsigned(hashes) + " tokens=" + Arrays.toString(tokens) + " blockSize=" + blockSize;
  }

  static String removed(String replica, long... hashes) {
    return "removed " + replica + " " + unsigned(hashes);
  }

  static String cleared(String replica) {
    return "cleared " + replica;
  }

  /** As {@link #stored}, for blocks of a tenant's (salted) chain. */
  static String storedFor(String tenant, String replica, @Nullable String model,
      @Nullable Long parent, long[] hashes, int[] tokens, int blockSize) {
    return stored(replica, model, parent, hashes, tokens, blockSize) + " tenant=" + tenant;
  }

  @Override
  public synchronized void blocksStored(String replicaId, @Nullable String model,
      @Nullable String tenant, @Nullable Long parentEngineHash, long[] engineBlockHashes,
      int[] tokenIds, int engineBlockSize) {
    calls.add(tenant == null
        ? stored(replicaId, model, parentEngineHash, engineBlockHashes, tokenIds, engineBlockSize)
        : storedFor(tenant, replicaId, model, parentEngineHash, engineBlockHashes, tokenIds,
            engineBlockSize));
  }

  @Override
  public synchronized void blocksRemoved(String replicaId, long[] engineBlockHashes) {
    calls.add(removed(replicaId, engineBlockHashes));
  }

  @Override
  public synchronized void allBlocksCleared(String replicaId) {
    calls.add(cleared(replicaId));
  }

  synchronized List<String> calls() {
    return List.copyOf(calls);
  }

  synchronized int size() {
    return calls.size();
  }

  synchronized void reset() {
    calls.clear();
  }

  private static String unsigned(@Nullable Long h) {
    return h == null ? "null" : Long.toUnsignedString(h);
  }

  private static String unsigned(long[] hashes) {
    StringBuilder s = new StringBuilder("[");
    for (int i = 0; i < hashes.length; i++) {
      s.append(i == 0 ? "" : ", ").append(Long.toUnsignedString(hashes[i]));
    }
    return s.append(']').toString();
  }
}
