package io.affinityrouter.examples.simulator.engine;

import io.affinityrouter.examples.simulator.fleet.EngineConfig;
import io.affinityrouter.examples.simulator.fleet.KvCache;
import io.affinityrouter.examples.simulator.fleet.ReplicaEngine;
import io.affinityrouter.examples.simulator.fleet.Sequence;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import io.affinityrouter.examples.simulator.workload.Workload;
import java.util.ArrayList;
import java.util.List;

/**
 * Measures what one replica can serve of a workload, so that arrival rates are set from a target
 * utilisation rather than guessed. The replica has the engine's own finite KV cache, so a workload
 * whose working set does not fit is measured with the evictions it causes. The sample is
 * representative of the whole workload, not of its start:
 *
 * <ul>
 *   <li>open-loop traces (every chain one request): {@code sample} consecutive requests from the
 *       middle of the trace, all queued at time 0, so the sessions and shared prefixes that meet in
 *       time meet here too;
 *   <li>sessions (chains of turns): chains picked evenly across the workload, at least
 *       {@value #MIN_CHAINS} (or all) and enough for {@code sample} requests; their first turns are
 *       queued at time 0 and each later turn when the previous one finishes (no think time), so the
 *       replica stays saturated with the sessions' own reuse.
 * </ul>
 *
 * The capacity is {@code requests / makespan}: a saturated replica's throughput. A fleet of
 * {@code n} replicas at load {@code ρ} then receives {@code ρ · n · capacity} requests per second;
 * strategies that miss the cache more than one replica does run hotter than {@code ρ}. Stateless
 * and thread-safe.
 */
public final class LoadCalibration {
  /** Fewest session chains in a sample, for a batch as wide as a busy replica's: {@value}. */
  static final int MIN_CHAINS = 64;

  private LoadCalibration() {}

  /**
   * Returns one replica's saturated throughput in requests per second.
   *
   * @throws IllegalArgumentException if {@code sample <= 0}
   */
  public static double requestsPerSecond(Workload workload, EngineConfig engineConfig, int sample) {
    if (sample <= 0) {
      throw new IllegalArgumentException("sample: " + sample + " (expected: > 0)");
    }
    List<SimRequest> first = sampleHeads(workload, sample);
    ReplicaEngine engine = new ReplicaEngine(0, engineConfig,
        new KvCache(engineConfig.kvBlocks(), engineConfig.prefixCaching()));
    int[] done = {0};
    int[] submitted = {first.size()};
    ReplicaEngine.Listener counter = new ReplicaEngine.Listener() {
      @Override
      public void onFirstToken(ReplicaEngine e, Sequence s, long nowNanos) {}

      @Override
      public void onFinished(ReplicaEngine e, Sequence s, long nowNanos) {
        done[0]++;
        SimRequest next = s.request().next();
        if (next != null) {
          e.submit(new Sequence(next, engineConfig, null));
          submitted[0]++;
        }
      }

      @Override
      public void onRejected(ReplicaEngine e, Sequence s, long nowNanos) {
        done[0]++;
      }
    };
    for (SimRequest r : first) {
      engine.submit(new Sequence(r, engineConfig, null));
    }
    long now = 0;
    long d;
    while ((d = engine.startStep()) > 0) {
      now += d;
      engine.finishStep(now, counter);
    }
    if (done[0] != submitted[0]) {
      throw new IllegalStateException("calibration finished " + done[0] + " of " + submitted[0]);
    }
    return done[0] / Math.max(1e-9, now / 1e9);
  }

  /** The sample's first requests: consecutive heads from the middle, or chains spread evenly. */
  static List<SimRequest> sampleHeads(Workload workload, int sample) {
    List<SimRequest> heads = workload.heads();
    double meanLength = (double) workload.size() / heads.size();
    if (meanLength <= 1.0) {
      int n = Math.min(sample, heads.size());
      int from = (heads.size() - n) / 2;
      return new ArrayList<>(heads.subList(from, from + n));
    }
    int chains = (int) Math.min(heads.size(),
        Math.max(MIN_CHAINS, Math.ceil(sample / meanLength)));
    List<SimRequest> out = new ArrayList<>(chains);
    for (int i = 0; i < chains; i++) {
      out.add(heads.get((int) ((long) i * heads.size() / chains)));
    }
    return out;
  }
}
