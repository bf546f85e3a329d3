package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class RendezvousTest {
  private static int winner(long key, int n, int removed) {
    int best = -1;
    long top = 0;
    for (int i = 0; i < n; i++) {
      if (i == removed) {
        continue;
      }
      long s = Rendezvous.score(key, Rendezvous.idHash("replica-" + i));
      if (best < 0 || s > top) {
        best = i;
        top = s;
      }
    }
    return best;
  }

  @Test
  void removingAReplicaMovesOnlyItsKeysAndSpreadsThemEvenly() {
    int n = 8;
    int[] load = new int[n];
    int moved = 0;
    for (long k = 0; k < 16_000; k++) {
      long key = Rendezvous.keyHash("session-" + k);
      int before = winner(key, n, -1);
      load[before]++;
      int after = winner(key, n, 3);
      if (before != 3) {
        assertThat(after).isEqualTo(before);
      } else {
        moved++;
      }
    }
    for (int l : load) {
      assertThat(l).isBetween(1700, 2300);
    }
    assertThat(moved).isEqualTo(load[3]);
  }
}
