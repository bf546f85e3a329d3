package io.affinityrouter.examples.simulator.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.examples.simulator.lifecycle.MultiModelSimulation.Config;
import io.affinityrouter.examples.simulator.lifecycle.MultiModelSimulation.Mode;
import io.affinityrouter.examples.simulator.lifecycle.MultiModelWorkload.Arrival;
import io.affinityrouter.examples.simulator.lifecycle.MultiModelWorkload.ModelSpec;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class MultiModelSimulationTest {
  private static final long S = 1_000_000_000L;

  /** One GPU, two slots: A and B start awake, C asleep. */
  private static final List<ModelSpec> THREE = List.of(
      new ModelSpec("a", 0.4, 0, 0, false, 0),
      new ModelSpec("b", 0.35, 0, 0, false, 1),
      new ModelSpec("c", 0.25, 0, 0, false, 0));

  private static MultiModelWorkload workload(List<ModelSpec> models, List<long[]> arrivals) {
    List<Arrival> out = new ArrayList<>();
    long id = 1;
    arrivals.sort((x, y) -> Long.compare(x[0], y[0]));
    for (long[] a : arrivals) {
      long uid = id++;
      out.add(new Arrival(a[0], (int) a[1], new SimRequest(uid, null, a[0],
          new long[] {1000 + a[1], (1L << 40) + uid}, new int[] {512, 256}, 16, -1)));
    }
    return new MultiModelWorkload(models, 1, out.get(out.size() - 1).atNanos(), out);
  }

  /** A for 10 s, B all along (2/s), a burst of C from 100 s. */
  private static List<long[]> burstOfC() {
    List<long[]> a = new ArrayList<>();
    for (long t = 0; t < 10 * S; t += S / 4) {
      a.add(new long[] {t, 0});
    }
    for (long t = 0; t < 150 * S; t += S / 2) {
      a.add(new long[] {t, 1});
    }
    for (long t = 100 * S; t < 130 * S; t += S / 10) {
      a.add(new long[] {t, 2});
    }
    return a;
  }

  private static Config lifecycle(int gpus, boolean elastic) {
    return new Config(Mode.LIFECYCLE, elastic, gpus, (long) (1.6 * S), (long) (1.6 * S),
        Duration.ofSeconds(300), 7);
  }

  @Test
  void burstOfSleepingModelSleepsTheIdleOneAndWakesIt() {
    MultiModelWorkload w = workload(THREE, burstOfC());
    MultiModelSimulation.Result r = MultiModelSimulation.run(w, lifecycle(1, false));

    assertThat(r.run().completed()).isEqualTo(w.arrivals().size());
    // C found no awake copy: A (idle for 90 s, past the wake cooldown) made room, then C woke
    assertThat(r.actions()).containsEntry("SLEEP MAKE_ROOM", 1L).containsEntry("WAKE DEMAND", 1L);
    assertThat(r.wakes()).isEqualTo(1);
    // C's first request waited for A's sleep (1.6 s) and C's wake (1.6 s), and no more than a
    // round and a step or two beyond; the ones queued behind it waited less
    long waiters = r.wakeWaitTtftMicros().getTotalCount();
    assertThat(waiters).isGreaterThan(1);
    assertThat(r.wakeWaitTtftMicros().getMaxValue()).isGreaterThanOrEqualTo(3_200_000L);
    assertThat(r.wakeWaitTtftMicros().getMaxValue()).isLessThan(3_200_000L + 1_500_000L);
    // B never went below its minimum of 1; A ended asleep, C awake
    assertThat(r.minAwake()[1]).isGreaterThanOrEqualTo(1);
    assertThat(r.minAwake()[0]).isZero();
  }

  @Test
  void wakeIntoAFreeSlotTakesTheWakeTime() {
    // two GPUs: A+B on gpu-0, C+B... the fourth slot holds a second copy of the busiest: a
    List<long[]> a = burstOfC();
    MultiModelWorkload w = workload(THREE, a);
    MultiModelSimulation.Result r = MultiModelSimulation.run(w, new Config(Mode.LIFECYCLE, false,
        1, (long) (1.6 * S), (long) (1.6 * S), Duration.ofSeconds(30), 7));
    // with a 30 s idle timeout A sleeps for idleness before C arrives: C wakes into its slot
    assertThat(r.actions()).containsEntry("SLEEP IDLE", 1L).containsEntry("WAKE DEMAND", 1L)
        .doesNotContainKey("SLEEP MAKE_ROOM");
    assertThat(r.wakeWaitTtftMicros().getMaxValue()).isGreaterThanOrEqualTo(1_600_000L);
    assertThat(r.wakeWaitTtftMicros().getValueAtPercentile(90)).isLessThan(2 * 1_600_000L);
    assertThat(r.run().completed()).isEqualTo(w.arrivals().size());
    assertThat(r.minAwake()[1]).isGreaterThanOrEqualTo(1);
  }

  @Test
  void elasticKvRunsTheSameScenario() {
    MultiModelWorkload w = workload(THREE, burstOfC());
    MultiModelSimulation.Result r = MultiModelSimulation.run(w, lifecycle(1, true));
    assertThat(r.run().completed()).isEqualTo(w.arrivals().size());
    assertThat(r.wakes()).isEqualTo(1);
    assertThat(r.minAwake()[1]).isGreaterThanOrEqualTo(1);
  }

  @Test
  void staticFleetSplitsSlotsByMeanTrafficOnDistinctGpus() {
    int[][] a = MultiModelSimulation.staticAssignment(MultiModelWorkload.preset(), 8);
    int[] count = new int[6];
    for (int[] gpu : a) {
      assertThat(gpu).hasSize(2);
      assertThat(gpu[0]).isNotEqualTo(gpu[1]);
      for (int m : gpu) {
        count[m]++;
      }
    }
    // 16 slots: 4.8, 4.0, 3.2, 2.4, 0.96, 0.64 -> at least 1 each, largest remainders
    assertThat(count).containsExactly(5, 4, 3, 2, 1, 1);
  }

  @Test
  void dedicatedFleetGivesEachGpuOneModel() {
    int[][] a = MultiModelSimulation.staticAssignment(MultiModelWorkload.preset(), 8, 1);
    int[] count = new int[6];
    for (int[] gpu : a) {
      assertThat(gpu).hasSize(1);
      count[gpu[0]]++;
    }
    // 8 slots: 2.4, 2.0, 1.6, 1.2, 0.48, 0.32 -> at least 1 each, largest remainders
    assertThat(count).containsExactly(2, 2, 1, 1, 1, 1);
    MultiModelWorkload w = MultiModelWorkload.generate(MultiModelWorkload.preset(), 20, 120, 3);
    MultiModelSimulation.Result d =
        MultiModelSimulation.run(w, Config.of(Mode.DEDICATED, false, 3));
    assertThat(d.modelsPerGpu()).isLessThanOrEqualTo(1.0);
    assertThat(d.wakes()).isZero();
    assertThat(d.run().completed()).isPositive();
  }

  @Test
  void presetRunIsDeterministicAndKeepsMinimums() {
    MultiModelWorkload w = MultiModelWorkload.generate(MultiModelWorkload.preset(), 20, 120, 3);
    Config c = Config.of(Mode.LIFECYCLE, false, 3);
    MultiModelSimulation.Result r1 = MultiModelSimulation.run(w, c);
    MultiModelSimulation.Result r2 = MultiModelSimulation.run(w, c);
    assertThat(r1.run().completed()).isEqualTo(r2.run().completed());
    assertThat(r1.run().ttftMillis(90)).isEqualTo(r2.run().ttftMillis(90));
    assertThat(r1.actions()).isEqualTo(r2.actions());
    List<ModelSpec> models = MultiModelWorkload.preset();
    for (int m = 0; m < models.size(); m++) {
      assertThat(r1.minAwake()[m]).as(models.get(m).name())
          .isGreaterThanOrEqualTo(models.get(m).minAwake());
    }
    MultiModelSimulation.Result s = MultiModelSimulation.run(w, Config.of(Mode.STATIC, false, 3));
    assertThat(s.modelsPerGpu()).isLessThanOrEqualTo(2.0); // a tail model may see no episode
    assertThat(s.wakes()).isZero();
    Set<Integer> seen = new HashSet<>(Arrays.stream(s.minAwake()).boxed().toList());
    assertThat(seen).doesNotContain(0);
  }
}
