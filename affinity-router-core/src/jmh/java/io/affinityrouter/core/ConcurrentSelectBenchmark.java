package io.affinityrouter.core;

import io.affinityrouter.Replica;
import io.affinityrouter.RequestLease;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One router shared by two threads, as a gateway's event loops share it: returning sessions
 * ({@link SessionWorkload}, pre-hashed 8K-token prompts, 64 replicas, the default 1M-block index
 * filled through the router's decisions).
 *
 * <ul>
 *   <li>group {@code handoff}: one thread selects and hands each lease to the other through a ring;
 *       the other closes them, as when the response completes on another thread. Per-decision
 *       counters ({@code ReplicaState}), the prefix index and the binding store are written from
 *       both threads.
 *   <li>group {@code both}: two threads each select and close their own leases.
 *   <li>{@code alone}: one thread selecting and closing, for comparison in the same run.
 * </ul>
 *
 * <pre>
 * java -jar jmh/target/benchmarks.jar ConcurrentSelectBenchmark -prof gc
 * </pre>
 */
@State(Scope.Group)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms2g", "-Xmx2g"})
public class ConcurrentSelectBenchmark {
  private static final int RING = 1024;

  private Router router;
  private List<Replica> fleet;
  private SessionWorkload workload;
  private final AtomicReferenceArray<RequestLease> ring = new AtomicReferenceArray<>(RING);

  /** Each thread's position in the Zipf session sequence and in the ring. */
  @State(Scope.Thread)
  public static class Cursor {
    int position;
    int slot;

    /** Starts this thread at its own place in the sequence. */
    @Setup(Level.Trial)
    public void setUp() {
      position = (int) (Thread.currentThread().getId() * 7919);
    }
  }

  /** Builds the router, fills its index, and routes every session once. */
  @Setup(Level.Trial)
  public void setUp() {
    TestClock clock = new TestClock();
    router = AffinityRouter.builder().clock(clock).build();
    fleet = Fleet.replicas(64, 42);
    IndexFill.fill(router, fleet, AffinityRouter.Builder.DEFAULT_PREFIX_INDEX_ENTRIES, 512, 7);
    workload = new SessionWorkload(router, Traffic.RETURNING, true, 8192, clock, 11);
    workload.warm(router, fleet);
  }

  /** Closes the leases left in the ring, then the router. */
  @TearDown(Level.Trial)
  public void tearDown() {
    for (int i = 0; i < RING; i++) {
      RequestLease l = ring.getAndSet(i, null);
      if (l != null) {
        l.close();
      }
    }
    router.close();
  }

  /** Selects and hands the lease to the closing thread. */
  @Benchmark
  @Group("handoff")
  @GroupThreads(1)
  public RoutingDecision select(Cursor c) {
    RoutingDecision d = router.select(workload.returningAt(c.position++), fleet);
    if (d.isRouted()) {
      RequestLease previous = ring.getAndSet(c.slot++ & (RING - 1), d.lease());
      if (previous != null) {
        previous.close(); // the closer fell a full ring behind: never leak a lease
      }
    }
    return d;
  }

  /** Closes the next handed-over lease, if there is one. */
  @Benchmark
  @Group("handoff")
  @GroupThreads(1)
  public boolean close(Cursor c) {
    RequestLease l = ring.getAndSet(c.slot & (RING - 1), null);
    if (l == null) {
      return false;
    }
    c.slot++;
    l.close();
    return true;
  }

  /** Two threads, each selecting and closing its own leases. */
  @Benchmark
  @Group("both")
  @GroupThreads(2)
  public RoutingDecision selectAndClose(Cursor c) {
    RoutingDecision d = router.select(workload.returningAt(c.position++), fleet);
    if (d.isRouted()) {
      d.lease().close();
    }
    return d;
  }

  /** One thread selecting and closing its own leases. */
  @Benchmark
  @Group("alone")
  @GroupThreads(1)
  public RoutingDecision selectAndCloseAlone(Cursor c) {
    return selectAndClose(c);
  }
}
