package io.affinityrouter.redis.testing;

import io.affinityrouter.Replica;
import io.affinityrouter.RoutingRequest;
import java.util.ArrayList;
import java.util.List;

/** A fleet of idle replicas and the requests of simulated sessions, for router-level tests. */
public final class Fleet {
  private Fleet() {}

  /** {@code n} healthy replicas {@code replica-0 … replica-(n-1)}, any model, unknown load. */
  public static List<Replica> replicas(int n) {
    List<Replica> replicas = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      replicas.add(Replica.of("replica-" + i));
    }
    return List.copyOf(replicas);
  }

  /** Turn {@code turn} of session {@code session}: a growing conversation, as token ids. */
  public static RoutingRequest turn(int session, int turn) {
    int[] tokens = new int[64 + 16 * turn];
    for (int i = 0; i < tokens.length; i++) {
      tokens[i] = (session * 31 + i * 7) & 0x7fff;
    }
    return RoutingRequest.builder().model("m").tenant("t").sessionId("session-" + session)
        .promptTokens(tokens).expectedOutputTokens(32).build();
  }
}
