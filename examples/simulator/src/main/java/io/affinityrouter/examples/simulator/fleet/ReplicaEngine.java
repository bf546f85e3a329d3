package io.affinityrouter.examples.simulator.fleet;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One simulated vLLM engine: a FIFO waiting queue, a running batch, continuous batching with chunked
 * prefill, and a {@link KvCache}.
 *
 * <p>Each step follows vLLM V1's scheduler ({@code vllm/v1/core/sched/scheduler.py}): running
 * sequences first (one token each when decoding, a chunk of the remaining prompt when prefilling),
 * then waiting ones in arrival order while the token budget ({@code maxBatchedTokens}), the sequence
 * limit and the KV cache allow; a waiting request that does not fit blocks those behind it. Cached
 * prompt tokens are skipped (never prefilled). The step lasts {@link CostModel#stepMicros}; at its end
 * a request whose prompt is complete emits its first token, and each decoding request one more.
 *
 * <p>KV blocks are allocated as tokens are computed, never for output not yet generated: a request is
 * admitted when its uncached prompt fits (vLLM's {@code scheduler_reserve_full_isl} admission gate),
 * and a decoding request takes one more block each time its output crosses a block boundary. When
 * that block cannot be had, the scheduler preempts the running request admitted last (popped from
 * the end of the running list; the request itself when it is the last): its blocks are freed, its
 * computed prompt segments stay cached and evictable, and it goes back to the front of the waiting
 * queue to recompute its prompt and output so far; no waiting request is admitted in that step
 * ({@code Scheduler.schedule} and {@code _preempt_request}, FCFS policy, no speculative lookahead).
 * The output tokens it had already produced stay produced: its first-token time stands, its later
 * tokens are delayed.
 *
 * <p>Not thread-safe: driven by one simulation thread through {@link #startStep()} and
 * {@link #finishStep(long, Listener)}.
 */
public final class ReplicaEngine {
  /** What happens to requests at the end of a step. */
  public interface Listener {
    /** The request's first output token was produced at {@code nowNanos}. */
    void onFirstToken(ReplicaEngine engine, Sequence sequence, long nowNanos);

    /** The request produced its last output token at {@code nowNanos}. */
    void onFinished(ReplicaEngine engine, Sequence sequence, long nowNanos);

    /** The request can never fit this engine's KV cache and was dropped. */
    void onRejected(ReplicaEngine engine, Sequence sequence, long nowNanos);
  }

  private final int index;
  private final EngineConfig config;
  private final KvCache cache;
  private final ArrayDeque<Sequence> waiting = new ArrayDeque<>();
  private List<Sequence> running = new ArrayList<>();
  private final List<Sequence> rejectedThisStep = new ArrayList<>();
  private boolean stepping;
  private long busyNanos;
  private long prefilledTokens;
  private long generatedTokens;
  private long recomputedTokens;
  private long preemptions;

  /**
   * Creates an engine.
   *
   * @param index the replica's index in the fleet
   * @param config its configuration
   * @param cache its KV cache (shared between engines only for the infinite-cache bound)
   */
  public ReplicaEngine(int index, EngineConfig config, KvCache cache) {
    this.index = index;
    this.config = config;
    this.cache = cache;
  }

  /** The replica's index in the fleet. */
  public int index() {
    return index;
  }

  /** The engine's KV cache. */
  public KvCache cache() {
    return cache;
  }

  /** The configuration. */
  public EngineConfig config() {
    return config;
  }

  /** Queues a request. */
  public void submit(Sequence sequence) {
    waiting.addLast(sequence);
  }

  /** Whether a step is in progress. */
  public boolean isStepping() {
    return stepping;
  }

  /** Requests in the running batch. */
  public int runningCount() {
    return running.size();
  }

  /** Requests waiting for admission. */
  public int waitingCount() {
    return waiting.size();
  }

  /** Total time spent in steps, in nanoseconds. */
  public long busyNanos() {
    return busyNanos;
  }

  /** Prompt tokens prefilled (computed, not cached) so far. */
  public long prefilledTokens() {
    return prefilledTokens;
  }

  /** Output tokens generated so far. */
  public long generatedTokens() {
    return generatedTokens;
  }

  /**
   * Tokens prefilled again after a preemption that the preempted requests had computed before (part
   * of {@link #prefilledTokens()}).
   */
  public long recomputedTokens() {
    return recomputedTokens;
  }

  /** Running requests preempted so far (each preemption counted). */
  public long preemptions() {
    return preemptions;
  }

  /** The request at the head of the waiting queue, or null. */
  @Nullable Sequence peekWaiting() {
    return waiting.peekFirst();
  }

  /** The running requests, oldest admission first (a read-only view). */
  List<Sequence> runningView() {
    return Collections.unmodifiableList(running);
  }

  /** KV usage 0..1 as vLLM reports it: blocks held by running requests over capacity. */
  public double kvUsage() {
    return Math.min(1.0, (double) cache.activeBlocks() / cache.capacityBlocks());
  }

  /**
   * Plans the next step.
   *
   * @return its duration in nanoseconds, or {@code -1} when there is nothing to run (the engine is
   *     then idle until the next {@link #submit})
   */
  public long startStep() {
    int budget = config.maxBatchedTokens();
    long prefill = 0;
    long decodes = 0;
    long context = 0;
    double attention = 0;
    boolean preempted = false;
    for (Sequence s : running) {
      s.plannedTokens = 0;
    }
    for (int i = 0; i < running.size() && budget > 0; i++) {
      Sequence s = running.get(i);
      int remaining = s.prefillRemaining();
      if (remaining > 0) {
        int t = Math.min(remaining, budget);
        s.plannedTokens = t;
        budget -= t;
        prefill += t;
        attention += CostModel.attentionTerm(t, s.kvTokens);
      } else {
        // The decode writes the KV of its latest output token: a new block at each boundary.
        int need = config.blocksFor(s.generated) - s.outputBlocksHeld;
        if (need > 0) {
          boolean self = false;
          while (!self && !cache.grow(need)) {
            Sequence victim = running.remove(running.size() - 1);
            preempt(victim);
            preempted = true;
            self = victim == s;
          }
          if (self) {
            break;
          }
          s.outputBlocksHeld += need;
        }
        s.plannedTokens = 1;
        budget -= 1;
        decodes++;
        context += s.contextTokens();
      }
    }
    // vLLM admits no waiting request in a step that preempted one.
    while (!preempted && !waiting.isEmpty() && budget > 0
        && running.size() < config.maxSeqs()) {
      Sequence s = waiting.peekFirst();
      SegmentsAdmission admitted = admit(s);
      if (admitted == SegmentsAdmission.WAIT) {
        break;
      }
      waiting.pollFirst();
      if (admitted == SegmentsAdmission.NEVER) {
        rejectedThisStep.add(s);
        continue;
      }
      running.add(s);
      int t = Math.min(s.prefillRemaining(), budget);
      s.plannedTokens = t;
      budget -= t;
      prefill += t;
      attention += CostModel.attentionTerm(t, s.kvTokens);
    }
    // A step that only preempted (nothing left to run) still ends, so the queue is tried again.
    if (prefill == 0 && decodes == 0 && rejectedThisStep.isEmpty() && !preempted) {
      stepping = false;
      return -1;
    }
    stepping = true;
    long nanos = (prefill == 0 && decodes == 0) ? 1
        : Math.round(config.cost().stepMicros(prefill, decodes, context, attention) * 1000.0);
    busyNanos += nanos;
    return nanos;
  }

  private enum SegmentsAdmission { ADMITTED, WAIT, NEVER }

  private SegmentsAdmission admit(Sequence s) {
    // As vLLM refuses a prompt plus max_tokens beyond max_model_len, whose KV always fits.
    if (!cache.fitsWhenEmpty(s.segmentBlocks(), s.outputBlocks())) {
      return SegmentsAdmission.NEVER;
    }
    long[] keys = s.request().keys();
    int extra = config.blocksFor(s.recomputeOutput);
    int m = cache.admit(keys, s.segmentBlocks(), extra);
    if (m < 0) {
      return SegmentsAdmission.WAIT;
    }
    s.matchedSegments = m;
    s.publishedSegments = m;
    int[] segTokens = s.request().segmentTokens();
    long t = 0;
    for (int i = 0; i < m; i++) {
      t += segTokens[i];
    }
    s.publishedTokens = t;
    // vLLM computes at least the last token to produce logits: the prompt's, or an output token's
    // when a preempted request recomputes its output.
    s.cached = s.recomputeOutput > 0 ? (int) t : s.request().cachedTokensOf(m);
    if (s.firstCached < 0) {
      s.firstCached = s.cached;
    }
    s.kvTokens = s.cached;
    s.prefilled = 0;
    s.outputBlocksHeld = extra;
    s.recomputeLeft = Math.max(0, s.computedBefore - s.cached);
    return SegmentsAdmission.ADMITTED;
  }

  /**
   * Preempts a running request (already taken off the running list): frees its blocks, leaving its
   * computed prompt segments cached, and queues it at the front to recompute.
   */
  private void preempt(Sequence s) {
    freeBlocks(s);
    s.computedBefore = Math.max(s.computedBefore, s.kvTokens);
    s.matchedSegments = -1;
    s.publishedSegments = 0;
    s.publishedTokens = 0;
    s.published = false;
    s.plannedTokens = 0;
    s.prefilled = 0;
    s.kvTokens = 0;
    s.outputBlocksHeld = 0;
    s.recomputeOutput = s.generated;
    s.preemptions++;
    preemptions++;
    waiting.addFirst(s);
  }

  /** Ends the step started by {@link #startStep()}, reporting first tokens and finished requests. */
  public void finishStep(long nowNanos, Listener listener) {
    stepping = false;
    for (Sequence s : rejectedThisStep) {
      listener.onRejected(this, s, nowNanos);
    }
    rejectedThisStep.clear();
    List<Sequence> still = new ArrayList<>(running.size());
    for (Sequence s : running) {
      boolean done = false;
      if (s.plannedTokens > 0) {
        if (s.prefillRemaining() > 0) {
          s.prefilled += s.plannedTokens;
          s.kvTokens += s.plannedTokens;
          prefilledTokens += s.plannedTokens;
          long again = Math.min(s.plannedTokens, s.recomputeLeft);
          s.recomputeLeft -= again;
          recomputedTokens += again;
          if (cacheKeepsPrompts()) {
            publishComputed(s);
          }
          if (s.prefillRemaining() == 0) {
            if (cacheKeepsPrompts()) {
              cache.publish(s.request().keys(), s.segmentBlocks(), s.publishedSegments,
                  s.segmentBlocks().length);
              s.publishedSegments = s.segmentBlocks().length;
            } else {
              cache.publish(s.request().keys(), s.segmentBlocks(), s.matchedSegments);
            }
            s.published = true;
            s.generated++;
            generatedTokens++;
            if (s.generated == 1) { // a recomputed request emitted its first token before
              listener.onFirstToken(this, s, nowNanos);
            }
            done = s.generated >= s.request().outputTokens();
          }
        } else {
          s.kvTokens++;
          s.generated++;
          generatedTokens++;
          done = s.generated >= s.request().outputTokens();
        }
        s.plannedTokens = 0;
      }
      if (done) {
        release(s);
        listener.onFinished(this, s, nowNanos);
      } else {
        still.add(s);
      }
    }
    running = still;
  }

  /** Publishes the segments the prefill has fully computed so far. */
  private void publishComputed(Sequence s) {
    int[] segTokens = s.request().segmentTokens();
    long computed = (long) s.cached + s.prefilled;
    int from = s.publishedSegments;
    int to = from;
    long tokens = s.publishedTokens;
    while (to < segTokens.length && tokens + segTokens[to] <= computed) {
      tokens += segTokens[to];
      to++;
    }
    if (to > from) {
      cache.publish(s.request().keys(), s.segmentBlocks(), from, to);
      s.publishedSegments = to;
      s.publishedTokens = tokens;
    }
  }

  /**
   * Releases a running request: unpins its published segments and returns the blocks still
   * reserved for it (its output, and the segments not published: all of them without prefix
   * caching, where nothing is ever published).
   */
  private void release(Sequence s) {
    freeBlocks(s);
    if (s.published && s.request().hasAnswerSegment()) {
      cache.insertUnpinned(s.request().answerKey(), config.blocksFor(s.request().outputTokens()));
    }
  }

  /** Unpins a request's published segments and returns the blocks still reserved for it. */
  private void freeBlocks(Sequence s) {
    long reserved = s.outputBlocksHeld;
    int[] blocks = s.segmentBlocks();
    for (int i = s.publishedSegments; i < blocks.length; i++) {
      reserved += blocks[i];
    }
    cache.release(s.request().keys(), s.publishedSegments, reserved);
  }

  private boolean cacheKeepsPrompts() {
    return config.prefixCaching();
  }

  /**
   * Drops every queued and running request (the replica was lost), releasing their blocks.
   *
   * @return the dropped sequences, waiting ones first
   */
  public List<Sequence> drainAll() {
    List<Sequence> out = new ArrayList<>(waiting);
    waiting.clear();
    for (Sequence s : running) {
      release(s);
      out.add(s);
    }
    running = new ArrayList<>();
    return out;
  }
}
