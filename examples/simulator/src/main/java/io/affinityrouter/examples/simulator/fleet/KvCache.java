package io.affinityrouter.examples.simulator.fleet;

import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongConsumer;

/**
 * The KV cache of one replica, at the granularity of prompt segments (a trace's hash-id block, or a
 * generated prompt part), each occupying a whole number of KV blocks and identified by a chained key
 * (equal keys mean equal prefixes up to and including the segment).
 *
 * <p>As vLLM's automatic prefix caching ({@code vllm/v1/core/block_pool.py},
 * {@code kv_cache_manager.py}): a request's prompt segments become reusable once its prefill is
 * done ({@link #publish}); while a request runs, its segments are pinned and cannot be evicted; when
 * it finishes ({@link #release}) they stay cached and join the least-recently-used free list, tail
 * segments first so that a prompt's tail is evicted before its head; space for a new request is made
 * by evicting from that list, oldest first. A request that does not fit waits ({@link #admit} returns
 * {@code -1}). Output blocks are allocated as decoding writes them ({@link #grow}), one block at a
 * time, as vLLM V1's {@code KVCacheManager.allocate_slots} does; when {@link #grow} fails the engine
 * preempts a running request, whose {@link #release} leaves its computed prompt segments cached and
 * evictable (vLLM keeps a freed block's hash until the block is reused).
 *
 * <p>A cache built with {@link #infinite()} never evicts (the infinite-cache bound). Not thread-safe:
 * one simulation thread drives it.
 */
public final class KvCache {
  private static final class Entry {
    final int blocks;
    int refs;

    Entry(int blocks) {
      this.blocks = blocks;
    }
  }

  private final long capacityBlocks;
  private final boolean prefixCaching;
  private final Map<Long, Entry> entries = new HashMap<>();
  /** Unpinned entries, least recently used first. */
  private final LinkedHashMap<Long, Entry> free = new LinkedHashMap<>();
  private long entryBlocks;
  private long freeListBlocks;
  private long reservedBlocks;
  private long evictedBlocks;
  private LongConsumer evictionListener = key -> { };

  /**
   * Creates a cache.
   *
   * @param capacityBlocks KV blocks available; must be {@code > 0}
   * @param prefixCaching whether prefixes are reused; when off, every request matches nothing and
   *     nothing stays cached after it finishes
   * @throws IllegalArgumentException if {@code capacityBlocks <= 0}
   */
  public KvCache(long capacityBlocks, boolean prefixCaching) {
    if (capacityBlocks <= 0) {
      throw new IllegalArgumentException("capacityBlocks: " + capacityBlocks + " (expected: > 0)");
    }
    this.capacityBlocks = capacityBlocks;
    this.prefixCaching = prefixCaching;
  }

  /** Sets what is told the key of each evicted segment (as an engine's KV events would). */
  public void onEviction(LongConsumer listener) {
    this.evictionListener = listener;
  }

  /** A cache that never runs out of space (for the infinite-cache bound). */
  public static KvCache infinite() {
    return new KvCache(Long.MAX_VALUE / 4, true);
  }

  /** The number of leading {@code keys} cached (pinned or not). */
  public int matchedSegments(long[] keys) {
    if (!prefixCaching) {
      return 0;
    }
    int m = 0;
    while (m < keys.length && entries.containsKey(keys[m])) {
      m++;
    }
    return m;
  }

  /**
   * Admits a request if its blocks fit: pins its cached prefix segments, evicts least recently used
   * unpinned segments as needed, and reserves blocks for the uncached segments and the extra blocks.
   *
   * @param keys the prompt's segment keys
   * @param segmentBlocks blocks of each segment
   * @param extraBlocks blocks to reserve beyond the prompt (the output tokens a preempted request
   *     recomputes; 0 for a new request)
   * @return the number of leading segments that were cached, or {@code -1} if the request does not
   *     fit now (nothing changed)
   */
  public int admit(long[] keys, int[] segmentBlocks, int extraBlocks) {
    int m = matchedSegments(keys);
    long need = extraBlocks;
    for (int i = m; i < keys.length; i++) {
      need += segmentBlocks[i];
    }
    long matchedFree = 0;
    for (int i = 0; i < m; i++) {
      Entry e = entries.get(keys[i]);
      if (e.refs == 0) {
        matchedFree += e.blocks;
      }
    }
    long available = capacityBlocks - usedBlocks() + freeListBlocks - matchedFree;
    if (need > available) {
      return -1;
    }
    for (int i = 0; i < m; i++) {
      pin(keys[i]);
    }
    evictUntilFree(need);
    reservedBlocks += need;
    return m;
  }

  /**
   * Allocates {@code blocks} more blocks for a running request (its decode crossed a block
   * boundary), evicting least recently used unpinned segments as needed.
   *
   * @return whether they were allocated; {@code false} (nothing changed) when pinned segments and
   *     reservations leave too little room, and a running request must be preempted
   */
  public boolean grow(long blocks) {
    if (blocks > capacityBlocks - usedBlocks() + freeListBlocks) {
      return false;
    }
    evictUntilFree(blocks);
    reservedBlocks += blocks;
    return true;
  }

  /** Whether a request of this size could ever be admitted to an empty cache. */
  public boolean fitsWhenEmpty(int[] segmentBlocks, int extraBlocks) {
    long need = extraBlocks;
    for (int b : segmentBlocks) {
      need += b;
    }
    return need <= capacityBlocks;
  }

  /**
   * Makes an admitted request's uncached segments reusable (its prefill is done); they stay pinned
   * until {@link #release}. A segment cached meanwhile by another request is shared and the blocks
   * reserved for it are returned.
   *
   * @param from the number of segments that were cached at admission
   */
  public void publish(long[] keys, int[] segmentBlocks, int from) {
    publish(keys, segmentBlocks, from, keys.length);
  }

  /**
   * Makes segments {@code from..to-1} of an admitted request reusable as soon as they are computed
   * (vLLM V1 registers each full block in the prefix cache when the step computing it is
   * scheduled, so later requests hit the blocks of a prefill still in progress).
   */
  public void publish(long[] keys, int[] segmentBlocks, int from, int to) {
    for (int i = from; i < to; i++) {
      reservedBlocks -= segmentBlocks[i];
      Entry e = prefixCaching ? entries.get(keys[i]) : null;
      if (e != null) {
        if (e.refs++ == 0) {
          free.remove(keys[i]);
          freeListBlocks -= e.blocks;
        }
      } else if (prefixCaching) {
        e = new Entry(segmentBlocks[i]);
        e.refs = 1;
        entries.put(keys[i], e);
        entryBlocks += e.blocks;
      } else {
        reservedBlocks += segmentBlocks[i];
      }
    }
  }

  /**
   * Releases a finished, failed or preempted request: unpins its segments, tail first into the free
   * list (they stay cached until evicted), and returns the reserved blocks.
   *
   * @param pinned how many leading segments the request holds (all after {@link #publish}, the
   *     matched ones before)
   * @param reserved the blocks still reserved for it (output, plus unpublished segments)
   */
  public void release(long[] keys, int pinned, long reserved) {
    reservedBlocks -= reserved;
    for (int i = pinned - 1; i >= 0; i--) {
      Entry e = entries.get(keys[i]);
      if (e != null && --e.refs == 0) {
        free.put(keys[i], e);
        freeListBlocks += e.blocks;
      }
    }
  }

  /**
   * Caches a segment computed during decoding (a model answer that the next turn's prompt repeats),
   * unpinned, if it fits; a segment already cached is only touched.
   */
  public void insertUnpinned(long key, int blocks) {
    if (!prefixCaching) {
      return;
    }
    Entry e = entries.get(key);
    if (e != null) {
      if (e.refs == 0) {
        free.remove(key);
        free.put(key, e);
      }
      return;
    }
    if (blocks > capacityBlocks - usedBlocks() + freeListBlocks) {
      return;
    }
    evictUntilFree(blocks);
    e = new Entry(blocks);
    entries.put(key, e);
    entryBlocks += blocks;
    free.put(key, e);
    freeListBlocks += blocks;
  }

  private void pin(long key) {
    Entry e = entries.get(key);
    if (e.refs++ == 0) {
      free.remove(key);
      freeListBlocks -= e.blocks;
    }
  }

  private void evictUntilFree(long need) {
    Iterator<Map.Entry<Long, Entry>> it = free.entrySet().iterator();
    while (capacityBlocks - usedBlocks() < need && it.hasNext()) {
      Map.Entry<Long, Entry> victim = it.next();
      it.remove();
      entries.remove(victim.getKey());
      int blocks = victim.getValue().blocks;
      freeListBlocks -= blocks;
      entryBlocks -= blocks;
      evictedBlocks += blocks;
      evictionListener.accept(victim.getKey());
    }
  }

  /** Blocks in use: cached segments (pinned or not) plus reservations. */
  public long usedBlocks() {
    return entryBlocks + reservedBlocks;
  }

  /** Blocks of cached segments, pinned or not ({@link #usedBlocks()} minus the reservations). */
  public long cachedBlocks() {
    return entryBlocks;
  }

  /** Blocks held by running requests: {@link #usedBlocks()} minus the evictable free list. */
  public long activeBlocks() {
    return usedBlocks() - freeListBlocks;
  }

  /** The capacity in blocks. */
  public long capacityBlocks() {
    return capacityBlocks;
  }

  /** Blocks evicted so far. */
  public long evictedBlocks() {
    return evictedBlocks;
  }

  /** Whether the segment is cached. */
  public boolean contains(long key) {
    return entries.containsKey(key);
  }

  /** Whether the segment is cached and pinned by a running request. */
  public boolean isPinned(long key) {
    Entry e = entries.get(key);
    return e != null && e.refs > 0;
  }
}
