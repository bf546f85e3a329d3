package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.PrefixCacheEvents;
import io.affinityrouter.core.kvevents.KvEventDecoder;
import io.affinityrouter.examples.simulator.workload.PromptTokens;
import io.affinityrouter.examples.simulator.workload.SegmentKeys;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Turns the simulated engines' cache changes into vLLM-style KV events for the real router
 * ({@link PrefixCacheEvents}): {@code BlockStored} for the full {@value #BLOCK_TOKENS}-token blocks
 * of a stored prompt range (engine hashes chained over the blocks' tokens, parent = the block
 * before), {@code BlockRemoved} for the blocks of an evicted segment (a block belongs to the segment
 * holding its last token), {@code AllBlocksCleared} when a replica is lost. Block hashes of a segment
 * depend only on the prefix, so one feed is shared by the gateways of a run. The events travel as
 * users' do: encoded as vLLM's msgpack batches ({@link KvEventBytes}) and decoded by the
 * subscriber's {@link KvEventDecoder}, one per router and replica. Not thread-safe.
 */
final class KvEventFeed {
  /** vLLM's block size. */
  static final int BLOCK_TOKENS = 16;

  private final PromptTokens tokens;
  private final KvEventBytes wire = new KvEventBytes();
  private final Map<PrefixCacheEvents, Map<String, KvEventDecoder>> decoders =
      new IdentityHashMap<>();
  private byte @Nullable [] lastStored;
  private int lastFirst = -1;
  private final Map<Long, long[]> blocksBySegment = new HashMap<>();
  private @Nullable SimRequest lastOwner;
  private int lastBlocks;
  private int[] lastPrompt = new int[0];
  private long[] lastHashes = new long[0];

  KvEventFeed(PromptTokens tokens) {
    this.tokens = tokens;
  }

  /** Sends {@code BlockStored} for the full blocks of {@code [fromToken, toToken)} of the prompt. */
  void stored(PrefixCacheEvents events, String replicaId, SimRequest owner, int fromToken,
      int toToken) {
    int blocks = Math.min(toToken, owner.inputTokens()) / BLOCK_TOKENS;
    int first = fromToken / BLOCK_TOKENS;
    if (first >= blocks) {
      return;
    }
    // the gateways are told one after the other: hash once per event
    if (owner != lastOwner || blocks != lastBlocks) {
      lastPrompt = tokens.tokens(owner);
      lastHashes = new long[blocks];
      long h = SegmentKeys.ROOT;
      for (int b = 0; b < blocks; b++) {
        for (int t = b * BLOCK_TOKENS; t < (b + 1) * BLOCK_TOKENS; t++) {
          h = SegmentKeys.chain(h, lastPrompt[t]);
        }
        lastHashes[b] = h;
      }
      lastOwner = owner;
      lastBlocks = blocks;
      lastStored = null;
      rememberSegments(owner, lastHashes);
    }
    if (lastStored == null || first != lastFirst) {
      lastStored = wire.stored(first == 0 ? null : lastHashes[first - 1], lastHashes, lastPrompt,
          first * BLOCK_TOKENS, blocks * BLOCK_TOKENS, BLOCK_TOKENS);
      lastFirst = first;
    }
    deliver(events, replicaId, lastStored);
  }

  /** Sends {@code AllBlocksCleared}: the replica's cache is gone. */
  void cleared(PrefixCacheEvents events, String replicaId) {
    deliver(events, replicaId, wire.cleared());
  }

  private void deliver(PrefixCacheEvents events, String replicaId, byte[] batch) {
    KvEventDecoder decoder = decoders.computeIfAbsent(events, e -> new HashMap<>())
        .computeIfAbsent(replicaId,
            id -> KvEventDecoder.create(events, id, null));
    if (!decoder.decode(batch)) {
      throw new IllegalStateException("undecodable KV-event batch: " + decoder.stats());
    }
  }

  private void rememberSegments(SimRequest owner, long[] hashes) {
    long[] keys = owner.keys();
    int[] lengths = owner.segmentTokens();
    int start = 0;
    for (int i = 0; i < keys.length; i++) {
      int end = start + lengths[i];
      // blocks whose last token (16b + 15) lies in [start, end)
      int from = Math.max(0, (start - BLOCK_TOKENS + 1 + BLOCK_TOKENS - 1) / BLOCK_TOKENS);
      int to = Math.min(hashes.length, (end - BLOCK_TOKENS) / BLOCK_TOKENS + 1);
      if (end >= BLOCK_TOKENS && from < to && !blocksBySegment.containsKey(keys[i])) {
        blocksBySegment.put(keys[i], Arrays.copyOfRange(hashes, from, to));
      }
      if (to >= hashes.length) {
        return;
      }
      start = end;
    }
  }

  /** Sends {@code BlockRemoved} for the blocks of an evicted segment. */
  void evicted(PrefixCacheEvents events, String replicaId, long segmentKey) {
    long[] hashes = blocksBySegment.get(segmentKey);
    if (hashes != null) {
      deliver(events, replicaId, wire.removed(hashes));
    }
  }
}
