package io.affinityrouter.core;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The prefix index alone, full to its bound ({@code indexBlocks}) with random chained hashes on 64
 * replicas: {@code matchKnown} finds the holders of a known 512-block prompt (8K tokens, four
 * replicas holding 448, 480, 496 and 512 blocks of it); {@code recordNew} records a new 64-block
 * conversation tail on one replica, evicting 64 sampled-LRU victims from the full table. Separates
 * the index's share of {@code select} and how it scales with the table size.
 *
 * <pre>
 * java -jar jmh/target/benchmarks.jar PrefixIndexBenchmark -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class PrefixIndexBenchmark {
  private static final int PROMPT_BLOCKS = 512;
  private static final int TAIL_BLOCKS = 64;

  @Param({"10000", "1000000", "10000000"})
  long indexBlocks;

  private PrefixIndex index;
  private long[] known;
  private long[] tail;
  private final int[] depthByOrdinal = new int[PrefixIndex.MAX_ORDINALS];
  private final int[] ordinals = new int[PrefixIndex.MAX_ORDINALS];
  private SplittableRandom random;
  private int ordinal;

  /** Fills the index to its bound and records the known prompt on four replicas. */
  @Setup(Level.Trial)
  public void setUp() {
    index = new PrefixIndex(indexBlocks);
    random = new SplittableRandom(5);
    long[] block = new long[PROMPT_BLOCKS];
    long inserted = 0;
    while (index.size() < indexBlocks * 0.98 && inserted < 4 * indexBlocks) {
      fillRandom(block, PROMPT_BLOCKS);
      index.record(block, PROMPT_BLOCKS, random.nextInt(64), 0);
      inserted += PROMPT_BLOCKS;
    }
    known = new long[PROMPT_BLOCKS];
    fillRandom(known, PROMPT_BLOCKS);
    int[] depths = {448, 480, 496, 512};
    for (int r = 0; r < depths.length; r++) {
      index.record(known, depths[r], r, 0);
    }
    tail = new long[TAIL_BLOCKS];
  }

  private void fillRandom(long[] a, int n) {
    for (int i = 0; i < n; i++) {
      long h = random.nextLong();
      a[i] = h == 0 ? 1 : h;
    }
  }

  /** Holders and depths of a known 512-block prompt. */
  @Benchmark
  public int matchKnown() {
    int count = index.match(known, PROMPT_BLOCKS, depthByOrdinal, ordinals);
    int sum = 0;
    for (int j = 0; j < count; j++) {
      sum += depthByOrdinal[ordinals[j]];
      depthByOrdinal[ordinals[j]] = 0;
    }
    return sum;
  }

  /** Records 64 new blocks on one replica (each insert evicts one block of the full table). */
  @Benchmark
  public long recordNew() {
    fillRandom(tail, TAIL_BLOCKS);
    ordinal = (ordinal + 1) & 63;
    index.record(tail, TAIL_BLOCKS, ordinal, 0);
    return tail[0];
  }
}
