package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.Replica;
import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * NVIDIA Dynamo's KV router with its default settings: the cost of each worker, in KV blocks of
 * {@link FleetView#blockSize()} tokens, lowest wins, ties uniformly at random (temperature 0):
 *
 * <pre>
 *   cost   = prefill_load_scale · max(0, prefill − overlap_score_credit · cached) + decode
 *   prefill = (in-flight prefill tokens + this prompt's tokens) / block size
 *   cached  = this prompt's full blocks cached on the worker
 *   decode  = distinct full prompt blocks of the worker's active requests
 *             + this prompt's full blocks not among them
 * </pre>
 *
 * with {@code overlap_score_credit} 1.0 and {@code prefill_load_scale} 1.0 (the former
 * {@code overlap_score_weight} 1.0). {@code prefill} is fractional: a prompt counts all its tokens,
 * the cached ones being credited back as whole blocks. In-flight prefill tokens are, for each
 * request this router sent to the worker that has no first token yet, its prompt minus the tokens
 * of the blocks cached there when it was routed ({@code router_track_prefill_tokens} on; a request
 * stops counting at its first token, as Dynamo's {@code mark_prefill_completed}). Active blocks are
 * the full prompt blocks of this router's requests on the worker until they finish ({@code free}),
 * each block once however many requests share it ({@code router_assume_kv_reuse} on); output
 * blocks are not counted ({@code router_track_output_blocks} off), nor is the output length, which
 * no router knows. The optional terms are at their defaults and drop out: credit decay 0, host and
 * disk tiers (the simulated engines have none), shared cache 0, active-request weight 0.
 *
 * <p>Cached blocks come from the workers' KV events, so this router knows each engine's exact cache
 * ({@link FleetView#exactCachedTokens}, in whole blocks). Each router instance (one per gateway)
 * tracks only the requests it routed, as each Dynamo router replica does without replica sync.
 * A block is identified by the chained key of the prompt up to its end ({@link
 * LlmdScorerStrategy#blockKeys}), so two prompts share a block exactly when they are equal up to
 * its last token.
 *
 * <p>Read in ai-dynamo/dynamo: {@code lib/kv-router/src/scheduling/selector/default.rs}
 * ({@code worker_logit}), {@code lib/kv-router/src/scheduling/selector/mod.rs} (the per-worker
 * prefill and decode inputs), {@code lib/kv-router/src/scheduling/config.rs} ({@code
 * KvRouterConfig} defaults), {@code lib/kv-router/src/scheduling/overlap.rs} (cached tokens are
 * matched blocks times the block size), {@code lib/kv-router/src/scheduling/types.rs}, {@code
 * lib/kv-router/src/sequences/single.rs} ({@code ActiveSequences}), {@code
 * lib/kv-router/src/sequences/prompt_registry.rs} (blocks a prompt would add), {@code
 * lib/llm/src/kv_router/push_router/request_guard.rs} (prefill completed at the first token).
 *
 * <p>Not thread-safe (one per gateway).
 */
final class DynamoKvCostStrategy implements RoutingStrategy {
  static final double OVERLAP_SCORE_CREDIT = 1.0;
  static final double PREFILL_LOAD_SCALE = 1.0;

  private final SplittableRandom random;
  // by request id: the requests this router sent that have not finished
  private final Map<Long, Booking> bookings = new HashMap<>();
  private Worker[] workers = new Worker[0];

  DynamoKvCostStrategy(long seed) {
    this.random = new SplittableRandom(seed);
  }

  @Override
  public Route route(SimRequest request, FleetView fleet) {
    List<Replica> rs = fleet.replicas();
    int bs = fleet.blockSize();
    long[] blocks = LlmdScorerStrategy.blockKeys(request, bs, Integer.MAX_VALUE, false);
    double[] costs = new double[rs.size()];
    for (int i = 0; i < costs.length; i++) {
      int idx = fleet.indexOf(rs.get(i));
      costs[i] = cost(idx, request, blocks, cachedBlocks(fleet, idx, request), bs);
    }
    int best = LeastLoaded.lowest(rs, costs, fleet, random);
    book(best, request, blocks, cachedBlocks(fleet, best, request), bs);
    return Route.of(best, "kv-cost");
  }

  /** The cost of routing {@code request} to the replica now, in blocks (for tests). */
  double cost(int replicaIndex, SimRequest request, FleetView fleet) {
    int bs = fleet.blockSize();
    return cost(replicaIndex, request,
        LlmdScorerStrategy.blockKeys(request, bs, Integer.MAX_VALUE, false),
        cachedBlocks(fleet, replicaIndex, request), bs);
  }

  private static int cachedBlocks(FleetView fleet, int replicaIndex, SimRequest request) {
    return fleet.exactCachedTokens(replicaIndex, request) / fleet.blockSize();
  }

  private double cost(int replicaIndex, SimRequest request, long[] blocks, int cachedBlocks,
      int bs) {
    Worker w = replicaIndex < workers.length ? workers[replicaIndex] : null;
    long inFlightPrefill = w == null ? 0 : w.prefillTokens;
    int isl = request.inputTokens();
    long cachedTokens = (long) cachedBlocks * bs;
    // Dynamo adds the cached tokens back and credits them as blocks; equal to isl unless over it
    long prompt = isl - Math.min(cachedTokens, isl) + cachedTokens;
    double prefill = (double) (inFlightPrefill + prompt) / bs;
    double adjusted = Math.max(0, prefill - OVERLAP_SCORE_CREDIT * cachedBlocks);
    int active = w == null ? 0 : w.blocks.size();
    // the active set holds whole prefixes, so the blocks present are a prefix of the prompt's
    int shared = 0;
    while (w != null && shared < blocks.length && w.blocks.contains(blocks[shared])) {
      shared++;
    }
    return PREFILL_LOAD_SCALE * adjusted + active + (blocks.length - shared);
  }

  private void book(int replicaIndex, SimRequest request, long[] blocks, int cachedBlocks,
      int bs) {
    Booking old = bookings.remove(request.id());
    if (old != null) {
      release(request, old);
    }
    Worker w = worker(replicaIndex);
    int isl = request.inputTokens();
    int prefill = isl - (int) Math.min((long) cachedBlocks * bs, isl);
    w.prefillTokens += prefill;
    for (long b : blocks) {
      w.blocks.increment(b);
    }
    bookings.put(request.id(), new Booking(replicaIndex, bs, prefill));
  }

  private Worker worker(int replicaIndex) {
    if (replicaIndex >= workers.length) {
      workers = Arrays.copyOf(workers, replicaIndex + 1);
    }
    if (workers[replicaIndex] == null) {
      workers[replicaIndex] = new Worker();
    }
    return workers[replicaIndex];
  }

  @Override
  public void onFirstToken(SimRequest request, Route route) {
    Booking b = bookings.get(request.id());
    if (b != null) {
      // a preempted request's first token comes again; its prefill was already counted done
      workers[b.replicaIndex].prefillTokens -= b.prefillTokens;
      b.prefillTokens = 0;
    }
  }

  @Override
  public void onFinished(SimRequest request, Route route, int outputTokens) {
    Booking b = bookings.remove(request.id());
    if (b != null) {
      release(request, b);
    }
  }

  private void release(SimRequest request, Booking b) {
    Worker w = workers[b.replicaIndex];
    w.prefillTokens -= b.prefillTokens;
    // recomputed rather than kept, so memory is the per-worker counts only
    for (long k : LlmdScorerStrategy.blockKeys(request, b.blockSize, Integer.MAX_VALUE, false)) {
      w.blocks.decrement(k);
    }
  }

  /** What this router counts on one worker. */
  private static final class Worker {
    final LongCounts blocks = new LongCounts();
    long prefillTokens;
  }

  /** One routed request: where, and its prefill tokens while they still count. */
  private static final class Booking {
    final int replicaIndex;
    final int blockSize;
    int prefillTokens;

    Booking(int replicaIndex, int blockSize, int prefillTokens) {
      this.replicaIndex = replicaIndex;
      this.blockSize = blockSize;
      this.prefillTokens = prefillTokens;
    }
  }
}
