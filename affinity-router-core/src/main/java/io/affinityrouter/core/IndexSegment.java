package io.affinityrouter.core;

import static io.affinityrouter.core.PrefixIndex.EVICTION_SAMPLES;
import static io.affinityrouter.core.PrefixIndex.EXACT_BIT;
import static io.affinityrouter.core.PrefixIndex.HOLDERS;
import static io.affinityrouter.core.PrefixIndex.HOLDERS_MASK;
import static io.affinityrouter.core.PrefixIndex.HOLDER_MASK;
import static io.affinityrouter.core.PrefixIndex.NOT_FOUND;
import static io.affinityrouter.core.PrefixIndex.SECONDS_MASK;
import static io.affinityrouter.core.PrefixIndex.TICKS_PER_SECOND;
import static io.affinityrouter.core.PrefixIndex.contains;
import static io.affinityrouter.core.PrefixIndex.holderSecond;

import java.util.concurrent.locks.StampedLock;

/**
 * One segment of a {@link PrefixIndex}: an open-addressing table (linear probing, backward-shift
 * deletion) behind one lock. Reads are optimistic; writes hold the lock for one block.
 */
final class IndexSegment {
  private final StampedLock lock = new StampedLock();
  // Three arrays, each under G1's humongous threshold at the default bound (see PrefixIndex).
  private final long[] keys; // [i] = hash (0 = empty)
  private final long[] metaWords; // [i] = stamp << 48 | holders
  // [i] = 16 bits per holder position: its last record in seconds (15 bits), and EXACT_BIT
  private final long[] ages;
  private final int[] recorded; // [i] = tick of the entry's last record
  private final int capacity;
  private final int maxSize;
  private final int tickEvery;
  private volatile int size;
  private int clock;
  private int ops;

  IndexSegment(int maxSize) {
    this.maxSize = maxSize;
    this.capacity = (int) Math.min(Integer.MAX_VALUE / 3, maxSize * 4L / 3 + 1);
    this.keys = new long[capacity];
    this.metaWords = new long[capacity];
    this.ages = new long[capacity];
    this.recorded = new int[capacity];
    this.tickEvery = Math.max(1, maxSize / 2048);
  }

  /** The entries held now. */
  int size() {
    return size;
  }

  private int home(long hash) {
    return (int) (((hash & 0xFFFF_FFFFL) * capacity) >>> 32);
  }

  long holders(long hash) {
    long stamp = lock.tryOptimisticRead();
    long result = find(hash);
    if (!lock.validate(stamp)) {
      stamp = lock.readLock();
      try {
        result = find(hash);
      } finally {
        lock.unlockRead(stamp);
      }
    }
    return result;
  }

  /** The tick of the entry's last record, or {@link #NOT_FOUND}. */
  long recordedTick(long hash) {
    long stamp = lock.tryOptimisticRead();
    long result = findRecorded(hash);
    if (!lock.validate(stamp)) {
      stamp = lock.readLock();
      try {
        result = findRecorded(hash);
      } finally {
        lock.unlockRead(stamp);
      }
    }
    return result;
  }

  /** The tick of {@code slot}'s last record of the entry, or {@link #NOT_FOUND}. */
  long holderTick(long hash, int slot) {
    return holderTick(hash, slot, false);
  }

  /**
   * As {@link #holderTick(long, int)}; with {@code exactIsNow}, {@link Long#MAX_VALUE} for a holder
   * the engine's events reported (it holds the block until they say otherwise).
   */
  long holderTick(long hash, int slot, boolean exactIsNow) {
    long stamp = lock.tryOptimisticRead();
    long result = findHolderTick(hash, slot, exactIsNow);
    if (!lock.validate(stamp)) {
      stamp = lock.readLock();
      try {
        result = findHolderTick(hash, slot, exactIsNow);
      } finally {
        lock.unlockRead(stamp);
      }
    }
    return result;
  }

  private long findHolderTick(long hash, int slot, boolean exactIsNow) {
    int i = indexOf(hash);
    if (i < 0) {
      return NOT_FOUND;
    }
    long holders = metaWords[i] & HOLDERS_MASK;
    int position = positionOf(holders, slot);
    if (position < 0) {
      return NOT_FOUND;
    }
    if (exactIsNow && ((ages[i] >>> (16 * position)) & EXACT_BIT) != 0) {
      return Long.MAX_VALUE;
    }
    if ((holders >>> (12 * (position + 1))) == 0) {
      return recorded[i]; // the most recent holder: the entry's own time
    }
    long second = holderSecond(recorded[i], ages[i] >>> (16 * position));
    return Math.min(recorded[i], second * TICKS_PER_SECOND);
  }

  private long findRecorded(long hash) {
    int i = indexOf(hash);
    return i >= 0 ? recorded[i] : NOT_FOUND;
  }

  private long find(long hash) {
    int i = home(hash);
    for (int probes = 0; probes < capacity; probes++) {
      long k = keys[i];
      if (k == hash) {
        return metaWords[i] & HOLDERS_MASK;
      }
      if (k == 0) {
        return 0;
      }
      i = i + 1 == capacity ? 0 : i + 1;
    }
    return 0;
  }

  private int indexOf(long hash) {
    int i = home(hash);
    for (int probes = 0; probes < capacity; probes++) {
      long k = keys[i];
      if (k == hash) {
        return i;
      }
      if (k == 0) {
        return -1 - i;
      }
      i = i + 1 == capacity ? 0 : i + 1;
    }
    return Integer.MIN_VALUE;
  }

  /** Records {@code slot} as the block's most recent holder; {@code exact}: by the engine's event. */
  void add(long hash, int slot, int tick, boolean exact) {
    long stamp = lock.writeLock();
    try {
      if (++ops >= tickEvery) {
        ops = 0;
        clock = (clock + 1) & 0xFFFF;
      }
      int i = indexOf(hash);
      if (i >= 0) {
        recordHolder(i, slot, tick, exact);
        return;
      }
      if (size >= maxSize) {
        evictNear(-1 - i);
        i = indexOf(hash);
      }
      int free = -1 - i;
      keys[free] = hash;
      metaWords[free] = ((long) clock << 48) | slot;
      recorded[free] = tick;
      ages[free] = ((tick / TICKS_PER_SECOND) & SECONDS_MASK) | (exact ? EXACT_BIT : 0);
      size++;
    } finally {
      lock.unlockWrite(stamp);
    }
  }

  /**
   * Makes {@code slot} the most recent holder of entry {@code i}, recorded at {@code tick}: the
   * other holders keep their order and their own times; one that lags by more than
   * {@value #PrefixIndex.MAX_HOLDER_LAG_SECONDS} s (which 16 bits cannot tell from a recent one) is dropped,
   * as is the least recent of a full set.
   */
  private void recordHolder(int i, int slot, int tick, boolean exact) {
    long holders = metaWords[i] & HOLDERS_MASK;
    long times = ages[i];
    int newest = Math.max(recorded[i], tick);
    long second = newest / TICKS_PER_SECOND;
    long keptHolders = 0;
    long keptTimes = 0;
    int kept = 0;
    int position = 0;
    boolean wasExact = false;
    for (long h = holders; h != 0; h >>>= 12, position++) {
      long s = h & HOLDER_MASK;
      long flag = (times >>> (16 * position)) & EXACT_BIT;
      if (s == slot) {
        wasExact = flag != 0; // a router's record of a block the engine reported keeps it exact
        continue;
      }
      long own = (h >>> 12) == 0 ? recorded[i] / TICKS_PER_SECOND
          : holderSecond(recorded[i], times >>> (16 * position));
      if (second - own >= PrefixIndex.MAX_HOLDER_LAG_SECONDS) {
        continue;
      }
      keptHolders |= s << (12 * kept);
      keptTimes |= ((own & SECONDS_MASK) | flag) << (16 * kept);
      kept++;
    }
    if (kept == HOLDERS) {
      keptHolders >>>= 12;
      keptTimes >>>= 16;
      kept--;
    }
    long own = tick / TICKS_PER_SECOND;
    metaWords[i] = ((long) clock << 48) | keptHolders | ((long) slot << (12 * kept));
    ages[i] = keptTimes
        | (((own & SECONDS_MASK) | (exact || wasExact ? EXACT_BIT : 0)) << (16 * kept));
    recorded[i] = newest;
  }

  /** Entry {@code i}'s holders and their times without the holder at {@code position}. */
  private void dropPosition(int i, long meta, int position) {
    long holders = meta & HOLDERS_MASK;
    long times = ages[i];
    long lowHolders = holders & ((1L << (12 * position)) - 1);
    long lowTimes = position == 0 ? 0 : times & ((1L << (16 * position)) - 1);
    long highHolders = holders >>> (12 * (position + 1));
    long highTimes = position + 1 >= HOLDERS ? 0 : times >>> (16 * (position + 1));
    metaWords[i] = (meta & ~HOLDERS_MASK) | lowHolders | (highHolders << (12 * position));
    ages[i] = lowTimes | (highTimes << (16 * position));
    if (highHolders == 0 && position > 0) {
      // The new most recent holder's own time becomes the entry's time.
      long second = holderSecond(recorded[i], times >>> (16 * (position - 1)));
      recorded[i] = (int) Math.min(recorded[i], second * TICKS_PER_SECOND);
    }
  }

  private static int positionOf(long holders, int slot) {
    int position = 0;
    for (long h = holders; h != 0; h >>>= 12, position++) {
      if ((h & HOLDER_MASK) == slot) {
        return position;
      }
    }
    return -1;
  }

  void remove(long hash, int slot) {
    long stamp = lock.writeLock();
    try {
      int i = indexOf(hash);
      if (i < 0) {
        return;
      }
      long meta = metaWords[i];
      int position = positionOf(meta & HOLDERS_MASK, slot);
      if (position < 0) {
        return;
      }
      if (((meta & HOLDERS_MASK) >>> 12) == 0) {
        delete(i); // it was the only holder
      } else {
        dropPosition(i, meta, position);
      }
    } finally {
      lock.unlockWrite(stamp);
    }
  }

  void removeHolderEverywhere(int slot) {
    long stamp = lock.writeLock();
    try {
      int i = 0;
      while (i < capacity) {
        if (keys[i] != 0) {
          long meta = metaWords[i];
          int position = positionOf(meta & HOLDERS_MASK, slot);
          if (position >= 0 && ((meta & HOLDERS_MASK) >>> 12) == 0) {
            delete(i); // shifts a later entry into i: look at i again
            continue;
          }
          if (position >= 0) {
            dropPosition(i, meta, position);
          }
        }
        i++;
      }
    } finally {
      lock.unlockWrite(stamp);
    }
  }

  /**
   * Evicts the least recently used of the {@value #EVICTION_SAMPLES} entries just before
   * {@code slot} (where the new key goes): keys sit at hash-random places, so neighbours are as
   * random a sample as any, and they share the insert's cache lines.
   */
  private void evictNear(int slot) {
    int victim = -1;
    int oldest = -1;
    int seen = 0;
    int i = slot;
    for (int probes = 0; probes < capacity && seen < EVICTION_SAMPLES; probes++) {
      i = i == 0 ? capacity - 1 : i - 1;
      if (keys[i] != 0) {
        int age = (clock - (int) (metaWords[i] >>> 48)) & 0xFFFF;
        if (age > oldest) {
          oldest = age;
          victim = i;
        }
        seen++;
      }
    }
    if (victim >= 0) {
      delete(victim);
    }
  }

  /** Backward-shift deletion keeps every probe chain unbroken without tombstones. */
  private void delete(int index) {
    int hole = index;
    int i = index;
    while (true) {
      i = i + 1 == capacity ? 0 : i + 1;
      long k = keys[i];
      if (k == 0) {
        break;
      }
      int home = home(k);
      boolean movable = hole <= i ? (home <= hole || home > i) : (home <= hole && home > i);
      if (movable) {
        keys[hole] = k;
        metaWords[hole] = metaWords[i];
        recorded[hole] = recorded[i];
        ages[hole] = ages[i];
        hole = i;
      }
    }
    keys[hole] = 0;
    metaWords[hole] = 0;
    recorded[hole] = 0;
    ages[hole] = 0;
    size--;
  }
}
