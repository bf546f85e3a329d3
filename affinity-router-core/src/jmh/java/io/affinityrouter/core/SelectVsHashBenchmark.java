package io.affinityrouter.core;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
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
 * {@code select} of a token prompt (hashing included) against hashing the same prompt alone, in one
 * run: 64 replicas, 8,192-token (512-block) session prompts ({@link SessionWorkload}), the default
 * 1M-block index filled through the router's decisions. {@code selectPrehashed} is the same
 * decision with the prompt hashed beforehand ({@link Router#prehash}).
 *
 * <p>Goal: {@code select} ≤ 2× {@code hash}.
 *
 * <pre>
 * java -jar jmh/target/benchmarks.jar SelectVsHashBenchmark -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class SelectVsHashBenchmark {
  /** Replicas: {@value}. */
  static final int REPLICAS = 64;
  /** Prompt tokens: {@value} (512 blocks). */
  static final int PROMPT_TOKENS = 8192;
  /** Index bound and fill, blocks: {@value}. */
  static final long INDEX_BLOCKS = AffinityRouter.Builder.DEFAULT_PREFIX_INDEX_ENTRIES;

  @Param({"RETURNING", "NEW"})
  Traffic traffic;

  private Router router;
  private List<Replica> fleet;
  private SessionWorkload tokens;
  private SessionWorkload prehashed;
  private final BlockHasher hasher = BlockHasher.defaults();
  private final long[] out = new long[BlockHasher.DEFAULT_MAX_PROMPT_BLOCKS];

  /** Builds the router, fills its index, and prepares token and pre-hashed traffic. */
  @Setup(Level.Trial)
  public void setUp() {
    TestClock clock = new TestClock();
    AffinityRouter.Builder builder = AffinityRouter.builder()
        .clock(clock)
        .prefixIndexEntries(INDEX_BLOCKS);
    if (traffic == Traffic.NEW) {
      builder.bindingTtl(Duration.ofMillis(1));
    }
    router = builder.build();
    fleet = Fleet.replicas(REPLICAS, 42);
    IndexFill.fill(router, fleet, INDEX_BLOCKS, 512, 7);
    tokens = new SessionWorkload(router, traffic, false, PROMPT_TOKENS, clock, 11);
    tokens.warm(router, fleet);
    prehashed = new SessionWorkload(router, traffic, true, PROMPT_TOKENS, clock, 11);
    prehashed.warm(router, fleet);
  }

  /** Closes the router. */
  @TearDown(Level.Trial)
  public void tearDown() {
    router.close();
  }

  /** Chained block hashing of the prompt alone (what {@code select} does first). */
  @Benchmark
  public long hash() {
    int n = hasher.hash(tokens.next(), out);
    return out[n - 1];
  }

  /** The decision for the token prompt, hashing included, and its lease's close. */
  @Benchmark
  public RoutingDecision select() {
    return selectAndClose(tokens);
  }

  /** The decision for the same prompt pre-hashed, and its lease's close. */
  @Benchmark
  public RoutingDecision selectPrehashed() {
    return selectAndClose(prehashed);
  }

  private RoutingDecision selectAndClose(SessionWorkload workload) {
    RoutingDecision d = router.select(workload.next(), fleet);
    if (d.isRouted()) {
      d.lease().close();
    }
    return d;
  }
}
