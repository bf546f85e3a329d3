package io.affinityrouter.examples.simulator.strategy;

import java.util.Arrays;

/**
 * A set of {@code long} keys bounded in entries that forgets its least recently added key first,
 * as golang-lru's {@code Cache} does for llm-d's prefix indexer: adding a key already held makes it
 * the most recent, a lookup does not. Primitive arrays (an open-addressing index over a doubly
 * linked recency list), since llm-d's per-pod index holds tens of thousands of block keys per pod
 * and is probed for every block of every prompt.
 *
 * <p>Not thread-safe.
 */
final class LongLruSet {
  private static final int NONE = -1;

  private final int capacity;
  private long[] keys;
  private int[] older;
  private int[] newer;
  // slot + 1 of the key hashed there, 0 for an empty cell; linear probing
  private int[] table;
  private int shift;
  private int size;
  private int eldest = NONE;
  private int newest = NONE;

  /**
   * Creates an empty set.
   *
   * @throws IllegalArgumentException if {@code capacity <= 0}
   */
  LongLruSet(int capacity) {
    if (capacity <= 0) {
      throw new IllegalArgumentException("capacity: " + capacity + " (expected: > 0)");
    }
    this.capacity = capacity;
    resize(Math.min(capacity, 64));
  }

  /** The most keys the set holds. */
  int capacity() {
    return capacity;
  }

  /** The keys held. */
  int size() {
    return size;
  }

  /** Whether the set holds {@code key}; does not make it more recent. */
  boolean contains(long key) {
    return find(key) != NONE;
  }

  /**
   * Adds {@code key} as the most recent key, or makes it the most recent if held; when the set is
   * full, the least recent key goes.
   */
  void add(long key) {
    int at = find(key);
    if (at != NONE) {
      int slot = table[at] - 1;
      if (slot != newest) {
        unlink(slot);
        linkNewest(slot);
      }
      return;
    }
    int slot;
    if (size < capacity) {
      if (size == keys.length) {
        resize(Math.min(capacity, keys.length * 2));
      }
      slot = size++;
    } else {
      slot = eldest;
      unlink(slot);
      removeAt(find(keys[slot]));
    }
    keys[slot] = key;
    index(slot);
    linkNewest(slot);
  }

  // while the set grows no key has gone yet, so slots 0..size-1 are the ones in use
  private void resize(int slots) {
    keys = keys == null ? new long[slots] : Arrays.copyOf(keys, slots);
    older = older == null ? new int[slots] : Arrays.copyOf(older, slots);
    newer = newer == null ? new int[slots] : Arrays.copyOf(newer, slots);
    // at most half the cells full keeps probe runs short
    int cells = Integer.highestOneBit(slots) << 2;
    table = new int[cells];
    shift = 64 - Integer.numberOfTrailingZeros(cells);
    for (int s = 0; s < size; s++) {
      index(s);
    }
  }

  private int home(long key) {
    return (int) ((key * 0x9E3779B97F4A7C15L) >>> shift);
  }

  private int find(long key) {
    int mask = table.length - 1;
    for (int at = home(key); ; at = (at + 1) & mask) {
      int e = table[at];
      if (e == 0) {
        return NONE;
      }
      if (keys[e - 1] == key) {
        return at;
      }
    }
  }

  private void index(int slot) {
    int mask = table.length - 1;
    int at = home(keys[slot]);
    while (table[at] != 0) {
      at = (at + 1) & mask;
    }
    table[at] = slot + 1;
  }

  // empties a cell and moves later cells of its probe run back so every key stays reachable
  private void removeAt(int hole) {
    int mask = table.length - 1;
    table[hole] = 0;
    for (int at = (hole + 1) & mask; table[at] != 0; at = (at + 1) & mask) {
      int h = home(keys[table[at] - 1]);
      boolean stays = hole <= at ? hole < h && h <= at : hole < h || h <= at;
      if (!stays) {
        table[hole] = table[at];
        table[at] = 0;
        hole = at;
      }
    }
  }

  private void linkNewest(int slot) {
    older[slot] = newest;
    newer[slot] = NONE;
    if (newest != NONE) {
      newer[newest] = slot;
    } else {
      eldest = slot;
    }
    newest = slot;
  }

  private void unlink(int slot) {
    int o = older[slot];
    int n = newer[slot];
    if (o != NONE) {
      newer[o] = n;
    } else {
      eldest = n;
    }
    if (n != NONE) {
      older[n] = o;
    } else {
      newest = o;
    }
  }
}
