package io.affinityrouter.core;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaLoad;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The replica lists the benchmarks route over: healthy replicas serving {@link #MODEL}, ready long
 * ago (no ramp), each with a seeded, varied load snapshot (running 0..31, waiting 0..3, KV usage
 * 0.2..0.8 of 1.08M tokens: a Qwen2.5-7B replica on one H100, see the design notes). Not a test
 * double: these are the values a gateway would pass after a metrics scrape. Stateless.
 */
public final class Fleet {
  /** The model every benchmark replica serves and every benchmark request asks for. */
  public static final String MODEL = "qwen2.5-7b-instruct";
  private static final long KV_CAPACITY_TOKENS = 1_082_544;

  private Fleet() {}

  /**
   * {@code n} replicas with ids {@code replica-0..n-1}, loads drawn from {@code seed}; an immutable
   * list.
   */
  public static List<Replica> replicas(int n, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    List<Replica> replicas = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      ReplicaLoad load = ReplicaLoad.builder()
          .runningRequests(random.nextInt(32))
          .waitingRequests(random.nextInt(4))
          .kvUsage(0.2 + 0.6 * random.nextDouble())
          .kvCapacityTokens(KV_CAPACITY_TOKENS)
          .build();
      replicas.add(Replica.builder("replica-" + i)
          .address("10.0." + (i >> 8) + "." + (i & 0xFF) + ":8000")
          .model(MODEL, io.affinityrouter.ModelState.ACTIVE)
          .load(load)
          .build());
    }
    return List.copyOf(replicas);
  }
}
