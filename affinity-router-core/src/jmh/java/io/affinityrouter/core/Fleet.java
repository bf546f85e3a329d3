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
  private static final long WRITTEN_BASE = 1_000_000_000L;

  private Fleet() {}

  /**
   * {@code n} replicas with ids {@code replica-0..n-1}, loads drawn from {@code seed}; an immutable
   * list.
   */
  public static List<Replica> replicas(int n, long seed) {
    return replicas(n, seed, -1);
  }

  /**
   * As {@link #replicas(int, long)}, each load also carrying the engine's KV write counter
   * ({@link ReplicaLoad#kvWrittenTokens}) as it reads after writing {@code writtenSeconds} at a rate
   * drawn from {@code seed}, 10k..60k tokens per second (a negative figure: no counter). Scraping
   * the list at two times and advancing the router's clock in between gives the router each
   * engine's write rate, and so each replica's cache lifetime. The other loads are those of
   * {@link #replicas(int, long)}.
   */
  public static List<Replica> replicas(int n, long seed, double writtenSeconds) {
    SplittableRandom random = new SplittableRandom(seed);
    SplittableRandom rates = new SplittableRandom(~seed);
    List<Replica> replicas = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      ReplicaLoad.Builder b = ReplicaLoad.builder()
          .runningRequests(random.nextInt(32))
          .waitingRequests(random.nextInt(4))
          .kvUsage(0.2 + 0.6 * random.nextDouble())
          .kvCapacityTokens(KV_CAPACITY_TOKENS);
      double rate = 10_000 + 50_000 * rates.nextDouble();
      if (writtenSeconds >= 0) {
        b.kvWrittenTokens(WRITTEN_BASE + (long) (rate * writtenSeconds));
      }
      ReplicaLoad load = b.build();
      replicas.add(Replica.builder("replica-" + i)
          .address("10.0." + (i >> 8) + "." + (i & 0xFF) + ":8000")
          .model(MODEL, io.affinityrouter.ModelState.ACTIVE)
          .load(load)
          .build());
    }
    return List.copyOf(replicas);
  }
}
