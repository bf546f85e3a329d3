package io.affinityrouter.examples.simulator.workload;

import java.util.HashMap;
import java.util.Map;

/**
 * Builds a request's synthetic prompt tokens (see {@link SegmentKeys#token}) for the real router,
 * caching each segment id's tokens so that a long prompt costs array copies, not hashing.
 *
 * <p>Not thread-safe: one per simulation run.
 */
public final class PromptTokens {
  // keyed by the id's mix: trace and generator ids are structured (session << 16 | turn), and
  // Long.hashCode of those collides into a few buckets
  private final Map<Long, int[]> bySegment = new HashMap<>();

  /** The prompt's tokens: each segment's synthetic tokens, concatenated. */
  public int[] tokens(SimRequest request) {
    int[] out = new int[request.inputTokens()];
    long[] ids = request.segmentIds();
    int[] lengths = request.segmentTokens();
    int at = 0;
    for (int i = 0; i < ids.length; i++) {
      int[] seg = segment(ids[i], lengths[i]);
      System.arraycopy(seg, 0, out, at, lengths[i]);
      at += lengths[i];
    }
    return out;
  }

  private int[] segment(long id, int length) {
    Long key = SegmentKeys.mix(id);
    int[] seg = bySegment.get(key);
    if (seg == null || seg.length < length) {
      seg = new int[length];
      for (int j = 0; j < length; j++) {
        seg[j] = SegmentKeys.token(id, j);
      }
      bySegment.put(key, seg);
    }
    return seg;
  }
}
