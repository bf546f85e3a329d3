package io.affinityrouter.examples.fakevllm;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A simulated automatic prefix cache: an LRU of chained block hashes, bounded by the engine's KV
 * blocks, as vLLM keeps freed blocks cached until it needs them.
 *
 * <p>A prompt is cut into blocks of {@code blockChars} characters (a trailing partial block is not
 * cached, as in vLLM); block {@code i}'s hash covers block {@code i}'s text and block
 * {@code i - 1}'s hash, so a hit means the whole prefix up to it matches. A lookup counts the
 * leading blocks already cached, stopping at the first miss, then stores (and refreshes) all of the
 * prompt's blocks. The hash is this fake engine's own (64-bit FNV-1a over the characters, chained);
 * the router's hashes differ, as a real engine's do.
 *
 * <p>With a {@link KvEventPublisher}, every change is published as it happens, in order: the
 * blocks a lookup stores ({@code BlockStored}, with their token ids), each block evicted
 * ({@code BlockRemoved}), a clear ({@code AllBlocksCleared}).
 *
 * <p>Thread-safe (every call is serialized).
 */
final class PrefixCache {
  private static final long FNV_OFFSET = 0xcbf29ce484222325L;
  private static final long FNV_PRIME = 0x100000001b3L;

  private final int blockChars;
  private final int capacityBlocks;
  private final LinkedHashMap<Long, Boolean> blocks; // guarded by this
  private final KvEventPublisher events; // null: none

  PrefixCache(int blockChars, int capacityBlocks) {
    this(blockChars, capacityBlocks, null);
  }

  PrefixCache(int blockChars, int capacityBlocks, KvEventPublisher events) {
    this.blockChars = blockChars;
    this.capacityBlocks = capacityBlocks;
    this.events = events;
    this.blocks = new LinkedHashMap<>(16, 0.75f, true) {
      private static final long serialVersionUID = 1L;

      @Override
      protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
        boolean evict = size() > PrefixCache.this.capacityBlocks;
        if (evict && events != null) {
          events.removed(eldest.getKey());
        }
        return evict;
      }
    };
  }

  /** The chained hashes of the full blocks of {@code blockSize} ids of {@code tokens}. */
  static long[] blockHashes(int[] tokens, int blockSize) {
    long[] hashes = new long[tokens.length / blockSize];
    long parent = FNV_OFFSET;
    for (int b = 0; b < hashes.length; b++) {
      long h = parent;
      for (int i = b * blockSize, end = i + blockSize; i < end; i++) {
        h = (h ^ tokens[i]) * FNV_PRIME;
      }
      hashes[b] = h;
      parent = h;
    }
    return hashes;
  }

  /** The chained hashes of the prompt's full blocks. */
  long[] blockHashes(String prompt) {
    long[] hashes = new long[prompt.length() / blockChars];
    long parent = FNV_OFFSET;
    for (int b = 0; b < hashes.length; b++) {
      long h = parent;
      for (int i = b * blockChars, end = i + blockChars; i < end; i++) {
        char c = prompt.charAt(i);
        h = (h ^ (c & 0xff)) * FNV_PRIME;
        h = (h ^ (c >>> 8)) * FNV_PRIME;
      }
      hashes[b] = h;
      parent = h;
    }
    return hashes;
  }

  /**
   * Counts the leading blocks of {@code hashes} already cached, then caches them all as most
   * recently used.
   */
  int lookupAndStore(long[] hashes) {
    return lookupAndStore(hashes, null, 0);
  }

  /**
   * As {@link #lookupAndStore(long[])}, publishing the blocks stored past the hit with their
   * {@code blockSize} token ids each from {@code tokens} (the prompt's, as the engine tokenized it).
   */
  synchronized int lookupAndStore(long[] hashes, int[] tokens, int blockSize) {
    int hits = 0;
    while (hits < hashes.length && blocks.containsKey(hashes[hits])) {
      hits++;
    }
    for (int b = 0; b < hits; b++) {
      blocks.get(hashes[b]); // most recently used, before the new blocks may evict
    }
    if (events != null && tokens != null && hits < hashes.length) {
      events.stored(hashes, hits, hashes.length, tokens, blockSize);
    }
    for (int b = hits; b < hashes.length; b++) {
      blocks.put(hashes[b], Boolean.TRUE);
    }
    return hits;
  }

  /** Blocks held now. */
  synchronized int size() {
    return blocks.size();
  }

  /** Drops every block (what vLLM's sleep level 2 or a reset does). */
  synchronized void clear() {
    blocks.clear();
    if (events != null) {
      events.cleared();
    }
  }
}
