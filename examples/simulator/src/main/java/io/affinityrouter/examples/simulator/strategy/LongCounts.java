package io.affinityrouter.examples.simulator.strategy;

/**
 * Reference counts of {@code long} keys: a key is held while its count is above zero. Primitive
 * arrays (open addressing, linear probing, deletion by backward shift), since a router probes every
 * block of every prompt against every worker's active blocks. The table grows at three quarters
 * full and shrinks below an eighth, so its memory follows the keys held.
 *
 * <p>Not thread-safe.
 */
final class LongCounts {
  private static final int MIN_CAPACITY = 16;

  private long[] keys = new long[MIN_CAPACITY];
  // 0 marks an empty cell: a held key always counts at least 1
  private int[] counts = new int[MIN_CAPACITY];
  private int mask = MIN_CAPACITY - 1;
  private int size;

  /** The keys held (count above zero). */
  int size() {
    return size;
  }

  /** Whether {@code key} is held. */
  boolean contains(long key) {
    return counts[find(key)] != 0;
  }

  /** The count of {@code key}, 0 when not held. */
  int count(long key) {
    return counts[find(key)];
  }

  /** Adds one to the count of {@code key}. */
  void increment(long key) {
    int at = find(key);
    if (counts[at] != 0) {
      counts[at]++;
      return;
    }
    keys[at] = key;
    counts[at] = 1;
    size++;
    if (size * 4 > keys.length * 3) {
      rehash(keys.length * 2);
    }
  }

  /**
   * Takes one from the count of {@code key}; the key goes when its count reaches zero.
   *
   * @throws IllegalStateException if {@code key} is not held
   */
  void decrement(long key) {
    int at = find(key);
    if (counts[at] == 0) {
      throw new IllegalStateException("key " + key + " is not held");
    }
    if (--counts[at] > 0) {
      return;
    }
    size--;
    shiftBack(at);
    if (keys.length > MIN_CAPACITY && size * 8 < keys.length) {
      rehash(keys.length / 2);
    }
  }

  // the cell holding key, or the empty cell where it would go
  private int find(long key) {
    int i = home(key);
    while (counts[i] != 0 && keys[i] != key) {
      i = (i + 1) & mask;
    }
    return i;
  }

  private int home(long key) {
    long h = key * 0x9E3779B97F4A7C15L;
    return (int) (h ^ (h >>> 32)) & mask;
  }

  // closes the gap at an emptied cell so that no probe sequence breaks there
  private void shiftBack(int gap) {
    int i = gap;
    while (true) {
      i = (i + 1) & mask;
      if (counts[i] == 0) {
        break;
      }
      int home = home(keys[i]);
      if (((i - home) & mask) >= ((i - gap) & mask)) {
        keys[gap] = keys[i];
        counts[gap] = counts[i];
        gap = i;
      }
    }
    counts[gap] = 0;
  }

  private void rehash(int capacity) {
    long[] oldKeys = keys;
    int[] oldCounts = counts;
    keys = new long[capacity];
    counts = new int[capacity];
    mask = capacity - 1;
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldCounts[i] != 0) {
        int at = find(oldKeys[i]);
        keys[at] = oldKeys[i];
        counts[at] = oldCounts[i];
      }
    }
  }
}
