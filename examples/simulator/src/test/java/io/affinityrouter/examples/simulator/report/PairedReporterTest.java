package io.affinityrouter.examples.simulator.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.affinityrouter.examples.simulator.report.PairedReporter.Row;
import io.affinityrouter.examples.simulator.report.PairedReporter.Sample;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PairedReporterTest {
  private static final Set<String> PEERS = Set.of("peer-a", "peer-b");

  /** Three seeds of one workload: ours, two peers and the bound. */
  private static List<Sample> samples() {
    List<Sample> s = new ArrayList<>();
    double[] oursHit = {50.0, 52.0, 51.0};
    double[] oursP99 = {100, 120, 110};
    for (int i = 0; i < 3; i++) {
      long seed = i + 1;
      s.add(new Sample(seed, "w", "ours", oursHit[i], oursP99[i]));
      // peer-a: 1, 2, 3 points fewer hits; p99 exactly 10 ms slower on every seed
      s.add(new Sample(seed, "w", "peer-a", oursHit[i] - (i + 1), oursP99[i] + 10));
      // peer-b: 0.5 point more hits on every seed; p99 -5, +5, 0 ms against ours
      s.add(new Sample(seed, "w", "peer-b", oursHit[i] + 0.5, oursP99[i] + new int[] {-5, 5, 0}[i]));
      s.add(new Sample(seed, "w", "bound", 90, 50));
    }
    return s;
  }

  @Test
  void pairsEachStrategyWithTheBaselineSeedBySeed() {
    List<Row> rows = PairedReporter.compare(samples(), "ours");
    assertThat(rows).extracting(Row::strategy).containsExactly("ours", "peer-a", "peer-b", "bound");
    Row a = rows.get(1);
    assertThat(a.seeds()).isEqualTo(3);
    assertThat(a.hitPercent()).isCloseTo(49.0, within(1e-9));
    assertThat(a.deltaHit()).isCloseTo(2.0, within(1e-9));
    // differences 1, 2, 3: sample sd 1, standard error 1/sqrt(3)
    assertThat(a.deltaHitSe()).isCloseTo(1 / Math.sqrt(3), within(1e-9));
    assertThat(a.deltaP99()).isCloseTo(-10, within(1e-9));
    assertThat(a.deltaP99Se()).isCloseTo(0, within(1e-9));
    Row b = rows.get(2);
    assertThat(b.deltaHit()).isCloseTo(-0.5, within(1e-9));
    assertThat(b.deltaP99()).isCloseTo(0, within(1e-9));
    assertThat(b.deltaP99Se()).isCloseTo(5 / Math.sqrt(3), within(1e-9));
    Row self = rows.get(0);
    assertThat(self.deltaHit()).isZero();
    assertThat(self.hitPercent()).isCloseTo(51.0, within(1e-9));
  }

  @Test
  void verdictComparesWithTheBestPeerOnlyAndCallsNoiseLevel() {
    String text = PairedReporter.format(samples(), "ours", PEERS::contains);
    // the bound has the most hits and the lowest p99 but is not a peer
    assertThat(text).contains("verdict: hit rate behind best peer peer-b (-0.50 ± 0.00 points)");
    // peer-b's p99 mean equals ours: the difference is within two standard errors
    assertThat(text).contains("TTFT p99 level with best peer peer-b (+0 ± 3 ms)");
    assertThat(text).contains("paired over 3 seeds [1, 2, 3]: ours minus each strategy");
  }

  @Test
  void verdictSaysAheadWhenTheBaselineLeadsBeyondTheNoise() {
    List<Sample> s = new ArrayList<>();
    for (long seed = 1; seed <= 4; seed++) {
      s.add(new Sample(seed, "w", "ours", 60 + seed * 0.1, 200 + seed));
      s.add(new Sample(seed, "w", "peer-a", 59, 300 + 2 * seed));
    }
    String text = PairedReporter.format(s, "ours", PEERS::contains);
    assertThat(text).contains("hit rate ahead of best peer peer-a (+1.25 ± 0.06 points)");
    assertThat(text).contains("TTFT p99 ahead of best peer peer-a (-103 ± 1 ms)");
  }

  @Test
  void onlySeedsBothRanArePaired() {
    List<Sample> s = new ArrayList<>(samples());
    s.add(new Sample(4, "w", "ours", 80, 10));
    List<Row> rows = PairedReporter.compare(s, "ours");
    assertThat(rows.get(0).seeds()).isEqualTo(4);
    assertThat(rows.get(1).seeds()).isEqualTo(3);
    assertThat(rows.get(1).deltaHit()).isCloseTo(2.0, within(1e-9));
  }

  @Test
  void workloadsWithoutTheBaselineAreLeftOut() {
    List<Sample> s = new ArrayList<>(samples());
    s.add(new Sample(1, "other", "peer-a", 10, 10));
    assertThat(PairedReporter.compare(s, "ours")).extracting(Row::workload).containsOnly("w");
  }

  @Test
  void aSingleSeedHasNoStandardError() {
    List<Sample> s = List.of(new Sample(7, "w", "ours", 50, 100),
        new Sample(7, "w", "peer-a", 49, 90));
    Row r = PairedReporter.compare(s, "ours").get(1);
    assertThat(r.deltaHitSe()).isNaN();
    String text = PairedReporter.format(s, "ours", PEERS::contains);
    assertThat(text).contains("hit rate ahead of best peer peer-a (+1.00 points)");
    assertThat(text).contains("TTFT p99 behind best peer peer-a (+10 ms)");
  }

  @Test
  void duplicateSamplesAreRejected() {
    List<Sample> s = List.of(new Sample(1, "w", "ours", 50, 100),
        new Sample(1, "w", "ours", 51, 100));
    assertThatThrownBy(() -> PairedReporter.compare(s, "ours"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("expected: one per seed, workload and strategy");
  }

  @Test
  void csvHasAHeaderAndARowPerPair() {
    String csv = PairedReporter.csv(samples(), "ours");
    String[] lines = csv.split("\n");
    assertThat(lines[0]).isEqualTo(PairedReporter.HEADER);
    assertThat(lines).hasSize(5);
    assertThat(lines[2]).startsWith("w,peer-a,3,49.0000,");
    assertThat(lines[2].split(",")).hasSize(PairedReporter.HEADER.split(",").length);
  }
}
