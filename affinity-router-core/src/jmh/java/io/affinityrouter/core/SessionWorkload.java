package io.affinityrouter.core;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Session traffic for {@code select} benchmarks, as token prompts or pre-hashed
 * ({@link Router#prehash}). Every prompt is one of {@value #FAMILIES} shared prefixes (system
 * prompt and tool schemas: 7/8 of the prompt's blocks, family drawn Zipf(1.0)) followed by a
 * conversation tail (the last 1/8).
 *
 * <ul>
 *   <li>{@link Traffic#RETURNING}: {@value #SESSIONS} sessions, drawn Zipf(1.0), each with its own
 *       tail; every session is routed once before measuring ({@link #warm}), so its binding exists
 *       and its prompt is in the index. The working set ({@code 4 × 7/8 + 64 × 1/8} prompts: 5,888
 *       blocks at 8K tokens) fits even the smallest index of the benchmarks, so the index size does
 *       not change the hit rate, only the table's size.
 *   <li>{@link Traffic#NEW}: every operation is a session the store has never seen (a pool of
 *       {@value #NEW_POOL} ids whose bindings expire between uses: {@link #next} advances the
 *       router's clock past the binding TTL, which the benchmark sets to 1 ms) with a tail never
 *       seen (rewritten before each operation: two token ids of a token prompt, or the tail's block
 *       hashes of a pre-hashed one; the rewrite is part of the measured operation and costs well
 *       under 1% of it). Each new tail is recorded in the index, evicting when it is full. Single
 *       thread only.
 *   <li>{@link Traffic#SESSIONLESS}: the returning prompts without session ids (no store call):
 *       the difference to {@code RETURNING} is the pinning protocol's share.
 *   <li>{@link Traffic#COLD}: as {@code NEW}, but the whole prompt is rewritten before each
 *       operation (every block hash of a pre-hashed prompt, the first two token ids of a token
 *       prompt), so no replica holds any of it.
 * </ul>
 *
 * <p>The rewrite mutates arrays that {@link RoutingRequest} documents as "do not modify"; that is
 * safe here because one thread owns them and the router copies what it keeps.
 */
final class SessionWorkload {
  /** Shared prompt prefixes: {@value}. */
  static final int FAMILIES = 4;
  /** Returning sessions: {@value}. */
  static final int SESSIONS = 64;
  /** Session ids of new traffic (reused only after their binding expired): {@value}. */
  static final int NEW_POOL = 1024;
  /** Clock step per new-traffic operation, past the 1 ms binding TTL: 2 ms. */
  static final Duration NEW_CLOCK_STEP = Duration.ofMillis(2);
  private static final int SEQUENCE = 1 << 16;

  private final Traffic traffic;
  private final boolean prehashed;
  private final TestClock clock;
  private final int blocks;
  private final int prefixBlocks;
  private final RoutingRequest[] requests;
  private final int[] sequence;
  private final long[][] familyBase;
  private final int[] familyOf;
  private long salt;
  private int cursor;

  SessionWorkload(Router router, Traffic traffic, boolean prehashed, int promptTokens,
      TestClock clock, long seed) {
    this.traffic = traffic;
    this.prehashed = prehashed;
    this.clock = clock;
    this.blocks = promptTokens / BlockSizes.TOKENS_PER_BLOCK;
    this.prefixBlocks = blocks - blocks / 8;
    SplittableRandom random = new SplittableRandom(seed);
    int prefixTokens = prefixBlocks * BlockSizes.TOKENS_PER_BLOCK;
    int[][] families = new int[FAMILIES][];
    for (int f = 0; f < FAMILIES; f++) {
      families[f] = tokens(random, promptTokens);
    }
    boolean returning = !traffic.fresh();
    int n = returning ? SESSIONS : NEW_POOL;
    String prefix = traffic == Traffic.SESSIONLESS ? null
        : returning ? "session-" : "new-session-";
    this.familyOf = Zipf.sequence(FAMILIES, 1.0, NEW_POOL, random.nextLong());
    this.requests = new RoutingRequest[n];
    if (traffic.fresh() && prehashed) {
      // One live hash array per family, shared by the pool's requests, its tail rewritten per op.
      familyBase = new long[FAMILIES][];
      long[][] live = new long[FAMILIES][];
      for (int f = 0; f < FAMILIES; f++) {
        familyBase[f] = router.prehash(request("family-" + f, families[f])).promptBlockHashes();
        live[f] = familyBase[f].clone();
      }
      for (int k = 0; k < n; k++) {
        requests[k] = RoutingRequest.builder()
            .model(Fleet.MODEL)
            .sessionId(prefix + k)
            .promptBlockHashes(live[familyOf[k]], promptTokens)
            .expectedOutputTokens(256)
            .build();
      }
    } else {
      familyBase = null;
      for (int k = 0; k < n; k++) {
        int[] prompt = tokens(random, promptTokens);
        System.arraycopy(families[familyOf[k]], 0, prompt, 0, prefixTokens);
        RoutingRequest r = request(prefix == null ? null : prefix + k, prompt);
        requests[k] = prehashed ? router.prehash(r) : r;
      }
    }
    this.sequence = Zipf.sequence(SESSIONS, 1.0, SEQUENCE, random.nextLong());
  }

  private static int[] tokens(SplittableRandom random, int n) {
    int[] t = new int[n];
    for (int i = 0; i < n; i++) {
      t[i] = random.nextInt(BlockSizes.VOCABULARY);
    }
    return t;
  }

  private static RoutingRequest request(String session, int[] prompt) {
    RoutingRequest.Builder b = RoutingRequest.builder()
        .model(Fleet.MODEL)
        .promptTokens(prompt)
        .expectedOutputTokens(256);
    if (session != null) {
      b.sessionId(session);
    }
    return b.build();
  }

  /** Routes every returning session once (claims its binding, records its prompt). */
  void warm(Router router, List<Replica> replicas) {
    if (traffic.fresh()) {
      return;
    }
    for (RoutingRequest r : requests) {
      RoutingDecision d = router.select(r, replicas);
      if (d.isRouted()) {
        d.lease().close();
      }
    }
  }

  /** The next operation's request (one thread only). */
  RoutingRequest next() {
    if (!traffic.fresh()) {
      return returningAt(cursor++);
    }
    int k = cursor++ & (NEW_POOL - 1);
    RoutingRequest r = requests[k];
    long n = ++salt;
    if (prehashed) {
      long[] base = familyBase[familyOf[k]];
      long[] live = r.promptBlockHashes();
      long mix = n * 0x9E3779B97F4A7C15L;
      for (int i = traffic == Traffic.COLD ? 0 : prefixBlocks; i < blocks; i++) {
        live[i] = (base[i] ^ mix) | 1L;
      }
    } else {
      // Chained hashing: changing the tail's first tokens changes every tail block's hash.
      int[] tokens = r.promptTokens();
      int at = traffic == Traffic.COLD ? 0 : prefixBlocks * BlockSizes.TOKENS_PER_BLOCK;
      tokens[at] = (int) (n % BlockSizes.VOCABULARY);
      tokens[at + 1] = (int) (n / BlockSizes.VOCABULARY % BlockSizes.VOCABULARY);
    }
    clock.advance(NEW_CLOCK_STEP);
    return r;
  }

  /** The returning (or session-less) request at a position of the Zipf sequence; thread-safe. */
  RoutingRequest returningAt(int position) {
    return requests[sequence[position & (SEQUENCE - 1)]];
  }
}
