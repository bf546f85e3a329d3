package io.affinityrouter.examples.simulator.fleet;

/**
 * The time one engine step takes, in microseconds:
 *
 * <pre>
 *   a + max(W, b·(P + D)) + c·D + d·K + e·A
 * </pre>
 *
 * with {@code P} the prefill tokens in the step, {@code D} the decode sequences, {@code K} the
 * context tokens the decode sequences read, and {@code A} = Σ over prefill chunks of
 * {@code t·(s + t/2)} ({@code t} chunk tokens, {@code s} tokens before the chunk: the quadratic
 * attention term).
 *
 * <p>The defaults ({@link #QWEN25_7B_H100}) are the fit to per-layer kernel times of Qwen2.5-7B on
 * an H100-80GB (source:
 * inference-sim {@code training/kernel_profiles/…qwen2-5-7b…yaml}, mean error 2.3%, worst 15%).
 * They give a 512 / 2k / 8k-token prefill of about 10.5 / 37 / 170 ms and a decode step of about
 * 6.5 ms at batch 1 to 14 ms at batch 256 with 1k context; real vLLM 0.15.1 measured 7.0 ms
 * inter-token latency for this pair.
 *
 * <p>Immutable and thread-safe.
 *
 * @param fixedMicros {@code a}: per-step overhead (scheduler, sampling, launch)
 * @param floorMicros {@code W}: the weight-read floor of a forward pass, paid however small the batch
 * @param perTokenMicros {@code b}: linear cost per batched token (prefill and decode)
 * @param perDecodeSeqMicros {@code c}: extra cost per decode sequence
 * @param perContextTokenMicros {@code d}: cost per context token read by decode attention
 * @param attentionMicros {@code e}: cost per unit of the prefill attention term {@code A}
 */
public record CostModel(double fixedMicros, double floorMicros, double perTokenMicros,
    double perDecodeSeqMicros, double perContextTokenMicros, double attentionMicros) {

  /** Qwen2.5-7B-Instruct, BF16, one H100-80GB (a, W, b, c, d, e of the fit above). */
  public static final CostModel QWEN25_7B_H100 =
      new CostModel(1550, 5550, 16.8, 8, 0.0185, 9.2e-4);

  /**
   * Validates the constants.
   *
   * @throws IllegalArgumentException if any constant is negative or not finite
   */
  public CostModel {
    check(fixedMicros, "fixedMicros");
    check(floorMicros, "floorMicros");
    check(perTokenMicros, "perTokenMicros");
    check(perDecodeSeqMicros, "perDecodeSeqMicros");
    check(perContextTokenMicros, "perContextTokenMicros");
    check(attentionMicros, "attentionMicros");
  }

  private static void check(double value, String name) {
    if (!(value >= 0) || Double.isInfinite(value)) {
      throw new IllegalArgumentException(name + ": " + value + " (expected: >= 0 and finite)");
    }
  }

  /**
   * Returns the step time in microseconds.
   *
   * @param prefillTokens {@code P}
   * @param decodeSeqs {@code D}
   * @param decodeContextTokens {@code K}
   * @param attentionTerm {@code A}
   */
  public double stepMicros(long prefillTokens, long decodeSeqs, long decodeContextTokens,
      double attentionTerm) {
    return fixedMicros + Math.max(floorMicros, perTokenMicros * (prefillTokens + decodeSeqs))
        + perDecodeSeqMicros * decodeSeqs + perContextTokenMicros * decodeContextTokens
        + attentionMicros * attentionTerm;
  }

  /**
   * The least time, in microseconds, in which any sequence of steps can prefill {@code tokens}
   * prompt tokens after {@code cached} cached ones when a step takes at most {@code budget} prefill
   * tokens: a lower bound on the time to first token of such a request, however it is batched.
   *
   * <p>Whatever else shares its steps, the prefill needs at least {@code ceil(tokens / budget)}
   * steps (each pays {@code a}); their linear terms add up to at least
   * {@code max(W, b·tokens)}; its chunks' attention terms add up to
   * {@code tokens·(cached + tokens/2)} however it is chunked; other sequences and decodes only
   * add.
   *
   * @throws IllegalArgumentException if {@code tokens} or {@code cached} is negative or
   *     {@code budget} is not positive
   */
  public double prefillFloorMicros(long tokens, long cached, int budget) {
    if (tokens < 0 || cached < 0 || budget <= 0) {
      throw new IllegalArgumentException("tokens, cached, budget: " + tokens + ", " + cached + ", "
          + budget + " (expected: >= 0, >= 0, > 0)");
    }
    if (tokens == 0) {
      return 0;
    }
    long steps = (tokens + budget - 1) / budget;
    return steps * fixedMicros + Math.max(floorMicros, perTokenMicros * tokens)
        + attentionMicros * attentionTerm(tokens, cached);
  }

  /** The attention term of one prefill chunk of {@code chunk} tokens after {@code before} tokens. */
  public static double attentionTerm(long chunk, long before) {
    return chunk * (before + chunk / 2.0);
  }
}
