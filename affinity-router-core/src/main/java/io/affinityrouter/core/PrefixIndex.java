package io.affinityrouter.core;

import java.util.concurrent.locks.StampedLock;
import java.util.function.LongSupplier;

/**
 * An approximate, memory-bounded index of which replicas hold which prompt blocks in their prefix
 * cache, keyed by {@link BlockHasher} chained hashes.
 *
 * <h2>Layout and bound</h2>
 * Entries live in {@value #SEGMENTS} segments (picked by a hash's top bits), each an open-addressing
 * table of three {@code long}s per slot: the block hash; a word holding up to {@value #HOLDERS}
 * replica ordinals (12 bits each, most recently used last) plus a 16-bit coarse access stamp (an
 * operation count, for the LRU); and per holder 16 bits: its last record in 15 bits of seconds,
 * and whether the engine's KV events reported it ({@link #add}: such a holder does not age), read
 * relative to the block's newest record ({@link #ageMillis(long, int, long)}), whose time sits
 * in an {@code int} beside the table in {@value #STAMP_MILLIS} ms ticks of the index's clock. A
 * holder whose last record is more than {@value #MAX_HOLDER_LAG_SECONDS} s older than the block's
 * newest one is dropped. No object per entry: about 38 bytes of heap per entry at the 0.75 fill the
 * bound allows. A segment
 * never holds more than its share of {@code maxEntries}; inserting into a full segment first evicts
 * the least recently used of {@value #EVICTION_SAMPLES} sampled entries (Redis-style sampled LRU).
 * A block cached by more than {@value #HOLDERS} replicas keeps the most recent ones.
 *
 * <h2>Matching in O(log n) probes</h2>
 * Chained hashes make a replica's cached blocks of a prompt a prefix of it: if block {@code i} is
 * cached on a replica, so are blocks {@code 0..i-1}. The holder set is therefore non-increasing along
 * the prompt, and {@link #match} finds every replica's depth by bisecting between positions whose
 * holder sets differ: {@code O(b log n)} probes for {@code b} distinct depths, not one per block.
 * Bisection splits at the position with the most trailing zero bits, so below a holder's depth
 * {@code d} it probes only {@code d - 1} rounded down to multiples of powers of two: the blocks
 * {@link #record} refreshes each time it records the prompt, which outlive a long prompt's other
 * blocks in the LRU. An evicted block in the middle of a live session's context therefore does not
 * cut its match short. Eviction of a probed block may still break the prefix property locally;
 * matching then under- or over-estimates a depth slightly, and the next {@link #record} repairs it.
 *
 * <h2>Threads</h2>
 * Thread-safe. Reads use a {@link StampedLock}'s optimistic mode and never block; writes lock one
 * segment at a time, for one block.
 */
final class PrefixIndex {
  /** Segments (a power of two): {@value}. */
  static final int SEGMENTS = 64;
  /** Replicas remembered per block: {@value}. */
  static final int HOLDERS = 4;
  /** Replica ordinals must be below this: {@value} (12 bits, 0 meaning "none"). */
  static final int MAX_ORDINALS = 4095;
  /** Entries sampled to choose an eviction victim: {@value}. */
  static final int EVICTION_SAMPLES = 8;
  /** The smallest accepted bound: {@value}. */
  static final long MIN_ENTRIES = 1024;

  private static final int SEGMENT_BITS = Integer.numberOfTrailingZeros(SEGMENTS);
  static final long HOLDER_MASK = 0xFFFL;
  static final long HOLDERS_MASK = 0xFFFF_FFFF_FFFFL;
  static final long NOT_FOUND = Long.MIN_VALUE;

  /** Resolution of an entry's last-record time, milliseconds: {@value}. */
  static final long STAMP_MILLIS = 125;
  /** Ticks per second of a holder's own last-record time: {@value}. */
  static final int TICKS_PER_SECOND = (int) (1000 / STAMP_MILLIS);
  /** The most a holder's last record may lag the block's newest one, seconds: {@value}. */
  static final int MAX_HOLDER_LAG_SECONDS = 0x7FFF;
  static final long SECONDS_MASK = 0x7FFFL;
  /** In a holder's 16 bits: the engine's own events say it holds the block (no ageing). */
  static final long EXACT_BIT = 0x8000L;

  private final IndexSegment[] segments = new IndexSegment[SEGMENTS];
  private final long maxEntries;
  private final LongSupplier millis;
  private final long baseMillis;

  /**
   * Creates an index holding at most {@code maxEntries} blocks.
   *
   * @throws IllegalArgumentException if {@code maxEntries < }{@value #MIN_ENTRIES} or too large to
   *     allocate in arrays
   */
  PrefixIndex(long maxEntries) {
    this(maxEntries, System::currentTimeMillis);
  }

  /**
   * Creates an index holding at most {@code maxEntries} blocks, stamping each entry's last use with
   * {@code millis} (at {@value #STAMP_MILLIS} ms resolution).
   *
   * @throws IllegalArgumentException if {@code maxEntries < }{@value #MIN_ENTRIES} or too large to
   *     allocate in arrays
   */
  PrefixIndex(long maxEntries, LongSupplier millis) {
    this.millis = java.util.Objects.requireNonNull(millis, "millis");
    this.baseMillis = millis.getAsLong();
    if (maxEntries < MIN_ENTRIES || maxEntries > (long) SEGMENTS * (Integer.MAX_VALUE / 5)) {
      throw new IllegalArgumentException("maxEntries: " + maxEntries + " (expected: "
          + MIN_ENTRIES + ".." + (long) SEGMENTS * (Integer.MAX_VALUE / 5) + ")");
    }
    this.maxEntries = maxEntries;
    int perSegment = (int) ((maxEntries + SEGMENTS - 1) / SEGMENTS);
    for (int i = 0; i < SEGMENTS; i++) {
      segments[i] = new IndexSegment(perSegment);
    }
  }

  /** The configured bound. */
  long maxEntries() {
    return maxEntries;
  }

  /** The number of blocks indexed now (never above {@link #maxEntries()} rounded up per segment). */
  long size() {
    long n = 0;
    for (IndexSegment s : segments) {
      n += s.size();
    }
    return n;
  }

  /**
   * Finds, for every replica that holds a prefix of {@code hashes[0..n)}, how many leading blocks it
   * holds. For each such replica, {@code depthByOrdinal[ordinal]} is set to its depth ({@code > 0})
   * and its ordinal is appended to {@code ordinalsOut}; other entries of {@code depthByOrdinal} are
   * not touched (the caller resets the ones it was given back).
   *
   * @return how many ordinals were written to {@code ordinalsOut}
   */
  int match(long[] hashes, int n, int[] depthByOrdinal, int[] ordinalsOut) {
    if (n == 0) {
      return 0;
    }
    long first = holders(hashes[0]);
    if (first == 0) {
      return 0;
    }
    long last = n == 1 ? first : holders(hashes[n - 1]);
    int count = 0;
    if (!sameSet(first, last)) {
      count = bisect(hashes, 0, n - 1, first, last, depthByOrdinal, ordinalsOut, count);
    }
    for (long h = last; h != 0; h >>>= 12) {
      count = emit((int) (h & HOLDER_MASK) - 1, n, depthByOrdinal, ordinalsOut, count);
    }
    return count;
  }

  private int bisect(long[] hashes, int lo, int hi, long atLo, long atHi, int[] depthByOrdinal,
      int[] ordinalsOut, int count) {
    if (hi - lo == 1) {
      // Replicas holding block lo but not block hi hold exactly lo + 1 blocks.
      for (long h = atLo; h != 0; h >>>= 12) {
        int slot = (int) (h & HOLDER_MASK);
        if (!contains(atHi, slot)) {
          count = emit(slot - 1, lo + 1, depthByOrdinal, ordinalsOut, count);
        }
      }
      return count;
    }
    int mid = mostAligned(lo + 1, hi - 1);
    long atMid = holders(hashes[mid]);
    if (!sameSet(atLo, atMid)) {
      count = bisect(hashes, lo, mid, atLo, atMid, depthByOrdinal, ordinalsOut, count);
    }
    if (!sameSet(atMid, atHi)) {
      count = bisect(hashes, mid, hi, atMid, atHi, depthByOrdinal, ordinalsOut, count);
    }
    return count;
  }

  /**
   * The position in {@code [x, y]} with the most trailing zero bits ({@code 0 < x <= y}). Bisecting
   * at such positions probes, below a holder's depth {@code d}, only {@code d - 1} rounded down to
   * multiples of powers of two: the blocks {@link #record} refreshes, which outlive the others in the
   * LRU, so an evicted block in the middle of a long prefix does not cut the match short.
   */
  static int mostAligned(int x, int y) {
    if (x == y) {
      return x;
    }
    int high = 31 - Integer.numberOfLeadingZeros(x ^ y);
    if ((x & ((2 << high) - 1)) == 0) {
      return x;
    }
    return y & -(1 << high);
  }

  private static int emit(int ordinal, int depth, int[] depthByOrdinal, int[] ordinalsOut,
      int count) {
    if (depthByOrdinal[ordinal] == 0) {
      ordinalsOut[count] = ordinal;
      depthByOrdinal[ordinal] = depth;
      return count + 1;
    }
    if (depth > depthByOrdinal[ordinal]) {
      depthByOrdinal[ordinal] = depth;
    }
    return count;
  }

  /**
   * Records that replica {@code ordinal} holds {@code hashes[0..n)}, after a decision routed the
   * prompt there: blocks from {@code knownDepth} on (those the replica was not known to hold) get it
   * as their most recent holder; of the blocks it already held, a logarithmic sample is refreshed:
   * the deepest, {@code knownDepth - 1}, rounded down to multiples of 2, 4, 8, ... down to the
   * first. Prompts that share a prefix refresh the same aligned blocks of it, so
   * {@link #freshDepth} finds a recently used prefix within a factor of two of its depth. Costs
   * {@code O(n - knownDepth + log n)} probes.
   *
   * @throws IllegalArgumentException if {@code ordinal} is out of range
   */
  void record(long[] hashes, int n, int ordinal, int knownDepth) {
    checkOrdinal(ordinal);
    int tick = tick(millis.getAsLong());
    int known = Math.max(0, Math.min(knownDepth, n));
    for (int i = known; i < n; i++) {
      segmentFor(hashes[i]).add(hashes[i], ordinal + 1, tick, false);
    }
    if (known > 0) {
      int last = -1;
      for (int level = 0; last != 0; level++) {
        int p = ((known - 1) >>> level) << level;
        if (p != last) {
          segmentFor(hashes[p]).add(hashes[p], ordinal + 1, tick, false);
          last = p;
        }
      }
    }
  }

  /**
   * The depth of the part of {@code hashes[0..depth)} that replica {@code ordinal} was recorded as
   * holding within {@code maxAgeMillis}: the deepest of the blocks {@link #record} refreshes
   * ({@code depth - 1} rounded down to multiples of 1, 2, 4, ...) whose last record <em>for that
   * replica</em> is that recent, or which the engine's own events reported ({@link #add}: held
   * until they remove it), plus one; 0 if none is. Recording a prompt refreshes its whole
   * prefix in a real prefix cache, so a recent block vouches for the blocks before it; another
   * replica's record of the same blocks says nothing about this one's copy. Costs
   * {@code O(log depth)} probes.
   *
   * @throws IllegalArgumentException if {@code ordinal} is out of range
   */
  int freshDepth(long[] hashes, int depth, long maxAgeMillis, long nowMillis, int ordinal) {
    checkOrdinal(ordinal);
    int last = -1;
    for (int level = 0; depth > 0 && last != 0; level++) {
      int p = ((depth - 1) >>> level) << level;
      if (p != last) {
        long recorded = segmentFor(hashes[p]).holderTick(hashes[p], ordinal + 1, true);
        long age = recorded == NOT_FOUND ? -1
            : Math.max(0, tick(nowMillis) - recorded) * STAMP_MILLIS;
        if (age >= 0 && age <= maxAgeMillis) {
          return p + 1;
        }
        last = p;
      }
    }
    return 0;
  }

  /**
   * Milliseconds since the block was last recorded (by any holder), at {@value #STAMP_MILLIS} ms
   * resolution, or {@code -1} if it is not indexed.
   */
  long ageMillis(long hash, long nowMillis) {
    long recorded = segmentFor(hash).recordedTick(hash);
    if (recorded == NOT_FOUND) {
      return -1;
    }
    return Math.max(0, tick(nowMillis) - recorded) * STAMP_MILLIS;
  }

  /**
   * Milliseconds since replica {@code ordinal} was last recorded as holding the block, or {@code -1}
   * if the block is not indexed or that replica is not among its holders. The most recent holder's
   * age has {@value #STAMP_MILLIS} ms resolution, the others' one second.
   *
   * @throws IllegalArgumentException if {@code ordinal} is out of range
   */
  long ageMillis(long hash, int ordinal, long nowMillis) {
    checkOrdinal(ordinal);
    long recorded = segmentFor(hash).holderTick(hash, ordinal + 1);
    if (recorded == NOT_FOUND) {
      return -1;
    }
    return Math.max(0, tick(nowMillis) - recorded) * STAMP_MILLIS;
  }

  /** The clock in {@value #STAMP_MILLIS} ms ticks since the index was created (an int: 8 years). */
  private int tick(long nowMillis) {
    long t = Math.floorDiv(nowMillis - baseMillis, STAMP_MILLIS);
    return (int) Math.max(0, Math.min(Integer.MAX_VALUE, t));
  }

  /** Adds replica {@code ordinal} as the most recent holder of one block (for exact cache events). */
  void add(long hash, int ordinal) {
    checkOrdinal(ordinal);
    segmentFor(hash).add(hash, ordinal + 1, tick(millis.getAsLong()), true);
  }

  /** Removes replica {@code ordinal} from one block's holders; drops the block when none is left. */
  void remove(long hash, int ordinal) {
    checkOrdinal(ordinal);
    segmentFor(hash).remove(hash, ordinal + 1);
  }

  /** Removes replica {@code ordinal} from every block (a full scan: for rare events only). */
  void removeAll(int ordinal) {
    checkOrdinal(ordinal);
    for (IndexSegment s : segments) {
      s.removeHolderEverywhere(ordinal + 1);
    }
  }

  /** Whether replica {@code ordinal} is recorded as holding the block. */
  boolean holds(long hash, int ordinal) {
    checkOrdinal(ordinal);
    return contains(holders(hash), ordinal + 1);
  }

  private long holders(long hash) {
    return segmentFor(hash).holders(hash);
  }

  private IndexSegment segmentFor(long hash) {
    return segments[(int) (hash >>> (64 - SEGMENT_BITS))];
  }

  private static void checkOrdinal(int ordinal) {
    if (ordinal < 0 || ordinal >= MAX_ORDINALS - 1) {
      throw new IllegalArgumentException(
          "ordinal: " + ordinal + " (expected: 0.." + (MAX_ORDINALS - 2) + ")");
    }
  }

  static boolean contains(long holders, int slot) {
    for (long h = holders; h != 0; h >>>= 12) {
      if ((h & HOLDER_MASK) == slot) {
        return true;
      }
    }
    return false;
  }

  static boolean sameSet(long a, long b) {
    if (a == b) {
      return true;
    }
    if (Long.bitCount(a) == 0 || Long.bitCount(b) == 0) {
      return false;
    }
    int na = 0;
    for (long h = a; h != 0; h >>>= 12) {
      if (!contains(b, (int) (h & HOLDER_MASK))) {
        return false;
      }
      na++;
    }
    int nb = 0;
    for (long h = b; h != 0; h >>>= 12) {
      nb++;
    }
    return na == nb;
  }

  /**
   * The absolute second a holder's 16-bit time stands for: the latest second at or before the
   * entry's newest record ({@code recordedTick}) with those low bits.
   */
  static long holderSecond(int recordedTick, long bits) {
    long newest = recordedTick / TICKS_PER_SECOND;
    return newest - ((newest - (bits & SECONDS_MASK)) & SECONDS_MASK);
  }
}
