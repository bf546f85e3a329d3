package io.affinityrouter.jmh;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.Collection;
import java.util.List;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * CPU time of the benchmark's worker threads per operation ({@code cpu.time.norm}, ns/op): on a
 * machine shared with other work, the wall-clock score counts the time a worker waits for a core,
 * its CPU time does not. Sums {@link ThreadMXBean#getThreadCpuTime} over the threads named
 * {@code *-jmh-worker-*} across each iteration, divided by the iteration's measured operations
 * (the few operations JMH runs outside the measured window with several threads are included in
 * the time, so the figure errs high). Use with {@code -prof io.affinityrouter.jmh.CpuTimeProfiler}.
 *
 * <p>JMH creates one instance per run and calls it from the harness thread only.
 */
public final class CpuTimeProfiler implements InternalProfiler {
  private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
  private long start;

  @Override
  public String getDescription() {
    return "CPU time of the worker threads per operation";
  }

  @Override
  public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
    start = workerCpuNanos();
  }

  @Override
  public Collection<? extends Result> afterIteration(BenchmarkParams benchmarkParams,
      IterationParams iterationParams, IterationResult result) {
    long cpu = workerCpuNanos() - start;
    long ops = result.getMetadata().getMeasuredOps();
    double perOp = ops == 0 ? Double.NaN : cpu / (double) ops;
    return List.of(new ScalarResult("cpu.time.norm", perOp, "ns/op", AggregationPolicy.AVG));
  }

  private long workerCpuNanos() {
    long total = 0;
    for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
      if (info != null && info.getThreadName().contains("-jmh-worker-")) {
        long t = threads.getThreadCpuTime(info.getThreadId());
        if (t > 0) {
          total += t;
        }
      }
    }
    return total;
  }
}
