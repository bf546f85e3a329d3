package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

import io.affinityrouter.core.TestClock;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** A lease closed twice (or completed and closed) releases once; in-flight never goes negative. */
class LeasePropertyTest {
  @Test
  void leasesReleaseOnceAndCountersNeverGoNegative() {
    qt().withExamples(1000).forAll(longs().all()).checkAssert(seed -> {
      SplittableRandom rnd = new SplittableRandom(seed);
      LoadTracker tracker = new LoadTracker(10, new TestClock());
      ReplicaState s = tracker.state("a");
      List<Lease> leases = new ArrayList<>();
      int open = 0;
      for (int i = 0; i < 80; i++) {
        int op = rnd.nextInt(5);
        if (op == 0 || leases.isEmpty()) {
          long prompt = rnd.nextInt(1000);
          long out = rnd.nextInt(100);
          if (s.tryAcquire(1000, Long.MAX_VALUE, prompt + out)) {
            leases.add(tracker.open(s, prompt + out, prompt, out));
            open++;
          }
          continue;
        }
        Lease l = leases.get(rnd.nextInt(leases.size()));
        boolean wasOpen = !l.isClosed();
        switch (op) {
          case 1 -> l.close();
          case 2 -> l.complete(rnd.nextInt(50));
          case 3 -> l.markFirstToken();
          default -> {
            l.close();
            l.close();
          }
        }
        if (wasOpen && l.isClosed()) {
          open--;
        }
        assertThat(s.inFlightRequests()).isEqualTo(open).isNotNegative();
        assertThat(s.inFlightTokens()).isNotNegative();
        assertThat(s.pendingPrefillTokens()).isNotNegative();
        assertThat(s.pendingDecodeTokens()).isNotNegative();
      }
      leases.forEach(Lease::close);
      assertThat(s.inFlightRequests()).isZero();
      assertThat(s.inFlightTokens()).isZero();
      assertThat(s.pendingPrefillTokens()).isZero();
      assertThat(s.pendingDecodeTokens()).isZero();
    });
  }
}
