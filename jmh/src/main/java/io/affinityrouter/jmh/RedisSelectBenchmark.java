package io.affinityrouter.jmh;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.core.Fleet;
import io.affinityrouter.core.Zipf;
import io.affinityrouter.redis.RedisBindingStore;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Decisions per second of a router whose binding store is a {@link RedisBindingStore} on a local
 * {@code redis-server}, and Redis commands per decision, without and with the store's local cache.
 * Traffic: {@value #SESSIONS} sessions drawn Zipf(1.0), pre-hashed 1K-token prompts, 64 replicas;
 * each thread runs blocking {@code select} calls, so the threads are the concurrency (compare with
 * {@code redis-benchmark -t get -c <threads>}).
 *
 * <p>{@code lettuceGet} is the control: a blocking Lettuce {@code GET} from the same threads.
 *
 * <p>Commands per decision: {@code INFO commandstats} is reset before each iteration and read
 * after it, counting what clients sent (every command except those run inside scripts and the
 * benchmark's own {@code INFO}/{@code CONFIG}); the last measured iteration's figure is printed and,
 * if the system property {@code ar.bench.redisStats} names a file, appended to it as
 * {@code localCacheSize threads commands decisions degraded}. Degraded decisions (the store did
 * not answer within the router's store timeout, or its circuit breaker was open) send no command
 * and are counted separately: a run with many of them does not measure the store.
 *
 * <p>Needs a redis-server at {@code redisUri} (default {@code redis://127.0.0.1:6390}) that it may
 * flush: {@code jmh/run-quick.sh} starts one, runs {@code redis-benchmark} and this benchmark at the
 * same concurrency, and stops it.
 *
 * <pre>
 * redis-server --port 6390 --save "" --appendonly no &amp;
 * java -jar jmh/target/benchmarks.jar RedisSelectBenchmark -t 4
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(4)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class RedisSelectBenchmark {
  /** Sessions: {@value}. */
  static final int SESSIONS = 10_000;
  private static final int PROMPT_BLOCKS = 64;
  private static final int SEQUENCE = 1 << 16;
  private static final Duration STORE_TIMEOUT = Duration.ofSeconds(2);
  private static final Set<String> SCRIPT_INNER =
      Set.of("get", "set", "pexpire", "time", "publish");

  @Param("redis://127.0.0.1:6390")
  String redisUri;

  @Param({"0", "100000"})
  long localCacheSize;

  private RedisClient admin;
  private StatefulRedisConnection<String, String> adminConnection;
  private RedisBindingStore store;
  private Router router;
  private List<Replica> fleet;
  private RoutingRequest[] requests;
  private int[] sequence;
  private final LongAdder decisions = new LongAdder();
  private final LongAdder degraded = new LongAdder();
  private int threads;
  private boolean selecting;
  private long lastCommands;
  private long lastDecisions;
  private long lastDegraded;

  /** Each thread's position in the Zipf session sequence. */
  @State(Scope.Thread)
  public static class Cursor {
    int position;

    /** Starts this thread at its own place in the sequence. */
    @Setup(Level.Trial)
    public void setUp() {
      position = (int) (Thread.currentThread().getId() * 7919);
    }
  }

  /** Flushes the server, connects the store (cache per the parameter), builds router and sessions. */
  @Setup(Level.Trial)
  public void setUp(org.openjdk.jmh.infra.BenchmarkParams params) {
    threads = params.getThreads();
    selecting = params.getBenchmark().endsWith(".select");
    admin = RedisClient.create(redisUri);
    adminConnection = admin.connect();
    adminConnection.sync().flushall();
    // Generous timeouts: on a shared machine a scheduling stall past the 50 ms default opens the
    // router's circuit breaker, and the decisions that follow are degraded (no store call).
    store = RedisBindingStore.builder().uri(redisUri).localCacheSize(localCacheSize)
        .commandTimeout(STORE_TIMEOUT).build();
    router = AffinityRouter.builder().bindingStore(store).storeTimeout(STORE_TIMEOUT).build();
    fleet = Fleet.replicas(64, 42);
    SplittableRandom random = new SplittableRandom(13);
    long[][] families = new long[8][PROMPT_BLOCKS];
    for (long[] f : families) {
      for (int i = 0; i < f.length; i++) {
        f[i] = random.nextLong() | 1L;
      }
    }
    requests = new RoutingRequest[SESSIONS];
    for (int s = 0; s < SESSIONS; s++) {
      requests[s] = RoutingRequest.builder()
          .model(Fleet.MODEL)
          .sessionId("bench-session-" + s)
          .promptBlockHashes(families[s & 7], PROMPT_BLOCKS * 16)
          .expectedOutputTokens(256)
          .build();
    }
    sequence = Zipf.sequence(SESSIONS, 1.0, SEQUENCE, random.nextLong());
  }

  /** Resets the server's command statistics and the decision counters. */
  @Setup(Level.Iteration)
  public void resetCounts() {
    adminConnection.sync().configResetstat();
    decisions.reset();
    degraded.reset();
  }

  /** Reads the commands and decisions of the iteration that just ended. */
  @TearDown(Level.Iteration)
  public void readCounts() {
    lastCommands = clientCommands(adminConnection.sync());
    lastDecisions = decisions.sum();
    lastDegraded = degraded.sum();
  }

  /** Reports commands per decision (select only) and closes router, store and connections. */
  @TearDown(Level.Trial)
  public void tearDown() {
    if (selecting) {
      report();
    }
    router.close();
    store.close();
    adminConnection.close();
    admin.shutdown();
  }

  private void report() {
    double perDecision = lastDecisions == 0 ? Double.NaN : lastCommands / (double) lastDecisions;
    System.out.printf(Locale.ROOT, "%nredis commands per decision: %.4f (%d commands, %d decisions,"
        + " %d of them degraded, localCacheSize %d, %d threads, last iteration)%n", perDecision,
        lastCommands, lastDecisions, lastDegraded, localCacheSize, threads);
    String out = System.getProperty("ar.bench.redisStats");
    if (out != null) {
      try {
        Files.writeString(Path.of(out), localCacheSize + " " + threads + " " + lastCommands + " "
            + lastDecisions + " " + lastDegraded + "\n", StandardCharsets.UTF_8, StandardOpenOption.CREATE,
            StandardOpenOption.APPEND);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /** One blocking decision through the Redis store, and its lease's close. */
  @Benchmark
  public RoutingDecision select(Cursor c) {
    RoutingDecision d = router.select(requests[sequence[c.position++ & (SEQUENCE - 1)]], fleet);
    if (d.isRouted()) {
      d.lease().close();
    }
    decisions.increment();
    if (d.isDegraded()) {
      degraded.increment();
    }
    return d;
  }

  /**
   * A plain Lettuce {@code GET} on the same client library, blocking, from the same threads: the
   * control that separates the JVM client's own cost from the router's and the store's.
   */
  @Benchmark
  public String lettuceGet() {
    return adminConnection.sync().get("bench-get-key");
  }

  /** Commands clients sent since the last reset (script-inner and admin commands excluded). */
  private static long clientCommands(RedisCommands<String, String> redis) {
    long total = 0;
    for (String line : redis.info("commandstats").split("\\R")) {
      if (!line.startsWith("cmdstat_")) {
        continue;
      }
      String name = line.substring("cmdstat_".length(), line.indexOf(':'));
      if (SCRIPT_INNER.contains(name) || name.equals("info") || name.startsWith("config")) {
        continue;
      }
      int start = line.indexOf("calls=") + "calls=".length();
      total += Long.parseLong(line.substring(start, line.indexOf(',', start)));
    }
    return total;
  }
}
