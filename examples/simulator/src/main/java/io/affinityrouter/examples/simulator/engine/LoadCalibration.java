package io.affinityrouter.examples.simulator.engine;

import io.affinityrouter.examples.simulator.fleet.EngineConfig;
import io.affinityrouter.examples.simulator.fleet.KvCache;
import io.affinityrouter.examples.simulator.fleet.ReplicaEngine;
import io.affinityrouter.examples.simulator.fleet.Sequence;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import io.affinityrouter.examples.simulator.workload.Workload;
import java.util.List;

/**
 * Measures what one replica can serve of a workload, so that arrival rates are set from a target
 * utilisation rather than guessed: the first {@code sample} requests (chains flattened, in order) are
 * all queued at time 0 on one engine with a never-evicting cache, and the engine runs until they are
 * done. The capacity is {@code sample / makespan}: the saturated throughput of a replica that reuses
 * every prefix it has seen (as the infinite-cache bound does). A fleet of {@code n} replicas at load
 * {@code ρ} then receives {@code ρ · n · capacity} requests per second; strategies that miss the cache
 * run hotter than {@code ρ}. Stateless and thread-safe.
 */
public final class LoadCalibration {
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
    List<SimRequest> all = workload.allRequests();
    List<SimRequest> batch = all.subList(0, Math.min(sample, all.size()));
    ReplicaEngine engine = new ReplicaEngine(0, engineConfig, KvCache.infinite());
    for (SimRequest r : batch) {
      engine.submit(new Sequence(r, engineConfig, null));
    }
    int[] done = {0};
    ReplicaEngine.Listener counter = new ReplicaEngine.Listener() {
      @Override
      public void onFirstToken(ReplicaEngine e, Sequence s, long nowNanos) {}

      @Override
      public void onFinished(ReplicaEngine e, Sequence s, long nowNanos) {
        done[0]++;
      }

      @Override
      public void onRejected(ReplicaEngine e, Sequence s, long nowNanos) {
        done[0]++;
      }
    };
    long now = 0;
    long d;
    while ((d = engine.startStep()) > 0) {
      now += d;
      engine.finishStep(now, counter);
    }
    if (done[0] != batch.size()) {
      throw new IllegalStateException("calibration finished " + done[0] + " of " + batch.size());
    }
    return batch.size() / (now / 1e9);
  }
}
