package io.affinityrouter.core;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import java.time.Duration;
import java.util.List;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@code select} end to end with the in-memory binding store: one pre-hashed session request
 * ({@link SessionWorkload}), scored over the fleet, picked, claimed or kept in the store, recorded in
 * the prefix index, and its lease closed. The index is first filled to {@code indexBlocks} blocks
 * through the router's own decisions ({@link IndexFill}), its bound set to the same size
 * ({@code prefixIndexEntries}).
 *
 * <p>Goals read from this benchmark: allocation per {@code select} with {@code -prof gc}
 * at 64 replicas and 8K tokens; cost at 1,024 replicas against 64; cost with a 10M-block index
 * against 10K; the same allocation with the hold queue on ({@code holding}) as off.
 * {@code COLD} traffic runs the cold-prompt placement, with each engine's KV write
 * rate known from two scrapes a second apart ({@link Fleet#replicas(int, long, double)}).
 *
 * <pre>
 * java -jar jmh/target/benchmarks.jar SelectBenchmark -prof gc
 * java -jar jmh/target/benchmarks.jar SelectBenchmark -p replicas=64 -p promptTokens=8192 \
 *     -p indexBlocks=1000000 -p traffic=RETURNING -prof gc -prof stack
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms3g", "-Xmx3g"})
public class SelectBenchmark {
  @Param({"8", "64", "1024"})
  int replicas;

  @Param({"1024", "8192", "32768"})
  int promptTokens;

  @Param({"10000", "1000000", "10000000"})
  long indexBlocks;

  @Param({"RETURNING", "NEW", "SESSIONLESS", "COLD"})
  Traffic traffic;

  /** Whether the hold queue is on: an uncongested select must cost the same either way. */
  @Param({"false", "true"})
  boolean holding;

  private Router router;
  private List<Replica> fleet;
  private SessionWorkload workload;

  /** Builds the router, fills its index to {@code indexBlocks}, and prepares the traffic. */
  @Setup(Level.Trial)
  public void setUp() {
    TestClock clock = new TestClock();
    AffinityRouter.Builder builder = AffinityRouter.builder()
        .clock(clock)
        .prefixIndexEntries(indexBlocks);
    if (traffic.fresh()) {
      builder.bindingTtl(Duration.ofMillis(1));
    }
    if (holding) {
      builder.holdQueue();
    }
    router = builder.build();
    fleet = Fleet.replicas(replicas, 42);
    long filled = IndexFill.fill(router, fleet, indexBlocks, 512, 7);
    if (filled < indexBlocks * 0.98) {
      throw new IllegalStateException("index filled to " + filled + " of " + indexBlocks);
    }
    if (traffic == Traffic.COLD) {
      // Two scrapes a second apart: the router learns each engine's KV write rate.
      scrape(Fleet.replicas(replicas, 42, 0), 1);
      clock.advance(Duration.ofSeconds(1));
      fleet = Fleet.replicas(replicas, 42, 1);
      scrape(fleet, 2);
    }
    workload = new SessionWorkload(router, traffic, true, promptTokens, clock, 11);
    workload.warm(router, fleet);
  }

  /** Routes one one-block request over {@code replicas}: the router reads their loads. */
  private void scrape(List<Replica> replicas, long hash) {
    RoutingDecision d = router.select(RoutingRequest.builder()
        .model(Fleet.MODEL)
        .promptBlockHashes(new long[] {hash}, BlockSizes.TOKENS_PER_BLOCK)
        .build(), replicas);
    if (d.isRouted()) {
      d.lease().close();
    }
  }

  /** Closes the router. */
  @TearDown(Level.Trial)
  public void tearDown() {
    router.close();
  }

  /** One decision and its lease's close. */
  @Benchmark
  public RoutingDecision select() {
    RoutingDecision d = router.select(workload.next(), fleet);
    if (d.isRouted()) {
      d.lease().close();
    }
    return d;
  }
}
