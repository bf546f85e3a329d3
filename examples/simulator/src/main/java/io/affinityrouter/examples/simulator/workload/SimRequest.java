package io.affinityrouter.examples.simulator.workload;

import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * One inference request of a workload: its prompt as a chain of segments (trace block ids with their
 * token lengths), its output length, its session, and when it arrives.
 *
 * <p>The prompt is never text: each segment carries the trace's id ({@link #segmentIds()}) and a
 * chained key ({@link #keys()}) that is equal for two requests exactly when their prompts are equal
 * up to and including that segment. A request may be followed by the next turn of its session
 * ({@link #next()}), which arrives {@link #delayNanos()} after this one finishes (closed loop); the
 * first request of a chain arrives at {@link #delayNanos()} after the start of the run.
 *
 * <p>Immutable after the workload is built (the {@code next} link is set once by the builder of the
 * workload). Arrays are shared, not copied: do not modify them.
 */
public final class SimRequest {
  private final long id;
  private final @Nullable String session;
  private final long delayNanos;
  private final long[] segmentIds;
  private final int[] segmentTokens;
  private final long[] keys;
  private final int inputTokens;
  private final int outputTokens;
  private final long answerId;
  private final long answerKey;
  private @Nullable SimRequest next;

  /**
   * Creates a request.
   *
   * @param id unique within the workload
   * @param session the session id, or null
   * @param delayNanos arrival time (first of a chain) or think time after the previous turn
   * @param segmentIds the trace's id of each prompt segment
   * @param segmentTokens the tokens of each segment; each must be {@code > 0}
   * @param outputTokens output tokens to generate; must be {@code > 0}
   * @param answerId the id of the answer as a segment the next turn repeats, or {@code -1}
   * @throws IllegalArgumentException on empty or mismatched arrays or non-positive sizes
   */
  public SimRequest(long id, @Nullable String session, long delayNanos, long[] segmentIds,
      int[] segmentTokens, int outputTokens, long answerId) {
    if (segmentIds.length == 0 || segmentIds.length != segmentTokens.length) {
      throw new IllegalArgumentException("segments: " + segmentIds.length + " ids, "
          + segmentTokens.length + " lengths (expected: equal and > 0)");
    }
    if (outputTokens <= 0) {
      throw new IllegalArgumentException("outputTokens: " + outputTokens + " (expected: > 0)");
    }
    if (delayNanos < 0) {
      throw new IllegalArgumentException("delayNanos: " + delayNanos + " (expected: >= 0)");
    }
    this.id = id;
    this.session = session;
    this.delayNanos = delayNanos;
    this.segmentIds = segmentIds;
    this.segmentTokens = segmentTokens;
    this.keys = new long[segmentIds.length];
    long prev = SegmentKeys.ROOT;
    int total = 0;
    for (int i = 0; i < segmentIds.length; i++) {
      if (segmentTokens[i] <= 0) {
        throw new IllegalArgumentException(
            "segmentTokens[" + i + "]: " + segmentTokens[i] + " (expected: > 0)");
      }
      prev = SegmentKeys.chain(prev, segmentIds[i]);
      keys[i] = prev;
      total += segmentTokens[i];
    }
    this.inputTokens = total;
    this.outputTokens = outputTokens;
    this.answerId = answerId;
    this.answerKey = answerId < 0 ? 0 : SegmentKeys.chain(prev, answerId);
  }

  /** Unique id within the workload. */
  public long id() {
    return id;
  }

  /** The session id, or null when the request has none. */
  public @Nullable String session() {
    return session;
  }

  /** Arrival time of a chain's first request, or think time before a follow-up turn. */
  public long delayNanos() {
    return delayNanos;
  }

  /** The trace's id of each prompt segment. */
  public long[] segmentIds() {
    return segmentIds;
  }

  /** The tokens of each segment. */
  public int[] segmentTokens() {
    return segmentTokens;
  }

  /** Chained segment keys: equal keys mean equal prompts up to that segment. */
  public long[] keys() {
    return keys;
  }

  /** Prompt tokens (sum of the segments). */
  public int inputTokens() {
    return inputTokens;
  }

  /**
   * Tokens of the first {@code segments} segments that a cache holding them can skip: their sum,
   * capped at {@code inputTokens() - 1} (an engine always computes the last prompt token).
   */
  public int cachedTokensOf(int segments) {
    int t = 0;
    for (int i = 0; i < segments; i++) {
      t += segmentTokens[i];
    }
    return Math.min(t, inputTokens - 1);
  }

  /** Output tokens to generate. */
  public int outputTokens() {
    return outputTokens;
  }

  /** Whether the answer is a segment the next turn repeats (cached when the request finishes). */
  public boolean hasAnswerSegment() {
    return answerId >= 0;
  }

  /** The answer's segment id ({@code -1} when none). */
  public long answerId() {
    return answerId;
  }

  /** The answer's chained key (after the whole prompt). */
  public long answerKey() {
    return answerKey;
  }

  /** The next turn of the session, or null. */
  public @Nullable SimRequest next() {
    return next;
  }

  /**
   * Links the next turn. Called once while building a workload.
   *
   * @throws IllegalStateException if a next turn is already linked
   */
  public void linkNext(SimRequest nextTurn) {
    if (next != null) {
      throw new IllegalStateException("next turn already linked for request " + id);
    }
    this.next = nextTurn;
  }

  /** Returns a copy arriving at another time (for time scaling), keeping the same next link. */
  public SimRequest withDelay(long newDelayNanos) {
    SimRequest copy = new SimRequest(id, session, newDelayNanos, segmentIds, segmentTokens,
        outputTokens, answerId);
    copy.next = next;
    return copy;
  }

  @Override
  public String toString() {
    return "SimRequest{" + id + ", session=" + session + ", segments=" + segmentIds.length
        + ", input=" + inputTokens + ", output=" + outputTokens + ", delayNanos=" + delayNanos
        + ", ids=" + Arrays.toString(Arrays.copyOf(segmentIds, Math.min(4, segmentIds.length)))
        + '}';
  }
}
