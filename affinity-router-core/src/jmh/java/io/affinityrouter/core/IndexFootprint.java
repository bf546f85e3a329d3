package io.affinityrouter.core;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.ref.Reference;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Retained heap per prefix index entry, and proof that the configured bound holds. Not a JMH
 * benchmark (it measures bytes, not time): a main that prints a markdown table and exits with
 * status 1 if the bound is ever exceeded.
 *
 * <ol>
 *   <li><b>Memory</b>: heap in use after full collections, before and after building a
 *       {@link PrefixIndex} of {@code entries} blocks (default 1,000,000) and filling it to the
 *       bound with random chained hashes on 64 replicas; the difference divided by the entries.
 *   <li><b>Bound</b>: a router built with {@code prefixIndexEntries(entries)} routes distinct
 *       512-block prompts carrying 10× the bound in blocks; the index size is checked after every
 *       decision, and the retained heap is measured again (it must not grow with the inserts).
 * </ol>
 *
 * <pre>
 * java -Xms2g -Xmx2g -cp jmh/target/benchmarks.jar \
 *     io.affinityrouter.core.IndexFootprint [entries]
 * </pre>
 */
public final class IndexFootprint {
  private static final int PROMPT_BLOCKS = 512;

  private IndexFootprint() {}

  /**
   * Runs the measurement.
   *
   * @param args optional: the bound in blocks (default 1,000,000)
   */
  public static void main(String[] args) throws InterruptedException {
    long entries = args.length > 0 ? Long.parseLong(args[0]) : 1_000_000L;
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();

    long before = retainedHeap(memory);
    PrefixIndex index = new PrefixIndex(entries);
    long empty = retainedHeap(memory);
    SplittableRandom random = new SplittableRandom(1);
    long[] hashes = new long[PROMPT_BLOCKS];
    while (index.size() < entries) {
      fill(random, hashes);
      index.record(hashes, PROMPT_BLOCKS, random.nextInt(64), 0);
    }
    long full = retainedHeap(memory);
    long size = index.size();
    Reference.reachabilityFence(index);
    index = null;

    TestClock clock = new TestClock();
    Router router = AffinityRouter.builder().clock(clock).prefixIndexEntries(entries).build();
    List<Replica> fleet = Fleet.replicas(64, 42);
    PrefixIndex routed = IndexFill.index(router);
    long routerBefore = retainedHeap(memory);
    long inserted = 0;
    long maxSize = 0;
    long checkpointSize = 0;
    long checkpointHeap = 0;
    while (inserted < 10 * entries) {
      fill(random, hashes);
      var request = io.affinityrouter.RoutingRequest.builder()
          .model(Fleet.MODEL)
          .promptBlockHashes(hashes, PROMPT_BLOCKS * BlockSizes.TOKENS_PER_BLOCK)
          .build();
      var d = router.select(request, fleet);
      if (d.isRouted()) {
        d.lease().close();
      }
      inserted += PROMPT_BLOCKS;
      maxSize = Math.max(maxSize, routed.size());
      if (checkpointHeap == 0 && inserted >= entries) {
        checkpointSize = routed.size();
        checkpointHeap = retainedHeap(memory);
      }
    }
    long finalSize = routed.size();
    long finalHeap = retainedHeap(memory);
    Reference.reachabilityFence(router);

    double perEntry = (full - before) / (double) size;
    System.out.println("| measure | value |");
    System.out.println("| --- | --- |");
    System.out.printf("| index bound (blocks) | %,d |%n", entries);
    System.out.printf("| entries held | %,d |%n", size);
    System.out.printf("| retained heap, empty index | %,d B |%n", empty - before);
    System.out.printf("| retained heap, full index | %,d B |%n", full - before);
    System.out.printf("| **heap per entry** | **%.1f B** |%n", perEntry);
    System.out.printf("| router: blocks inserted through select | %,d (%.0f× the bound) |%n",
        inserted, inserted / (double) entries);
    System.out.printf("| router: largest index size seen (after every decision) | %,d |%n",
        maxSize);
    System.out.printf("| router: index size after 1× / 10× the bound | %,d / %,d |%n",
        checkpointSize, finalSize);
    System.out.printf("| router: retained heap after 1× / 10× the bound (vs. before) | %+,d B / "
        + "%+,d B |%n", checkpointHeap - routerBefore, finalHeap - routerBefore);
    boolean held = maxSize <= entries;
    System.out.printf("| bound holds | %s |%n", held ? "yes" : "NO");
    if (!held) {
      System.exit(1);
    }
  }

  private static void fill(SplittableRandom random, long[] hashes) {
    for (int i = 0; i < hashes.length; i++) {
      long h = random.nextLong();
      hashes[i] = h == 0 ? 1 : h;
    }
  }

  /** Heap in use after collections have settled. */
  private static long retainedHeap(MemoryMXBean memory) throws InterruptedException {
    long last = Long.MAX_VALUE;
    for (int i = 0; i < 10; i++) {
      System.gc();
      Thread.sleep(50);
      long used = memory.getHeapMemoryUsage().getUsed();
      if (Math.abs(used - last) < 4096) {
        return used;
      }
      last = used;
    }
    return last;
  }
}
