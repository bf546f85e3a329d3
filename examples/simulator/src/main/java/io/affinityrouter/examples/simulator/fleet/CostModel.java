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
 * <p>The defaults ({@link #QWEN25_7B_H100}) are for Qwen2.5-7B on an H100-80GB:
 *
 * <ul>
 *   <li>{@code a}, {@code W}, {@code c}, {@code d}, {@code e}: the fit to per-layer kernel times of
 *       inference-sim {@code training/kernel_profiles/…qwen2-5-7b…yaml} (mean error 2.3%, worst 15%);
 *       {@code a + W} = 7.1 ms is the decode step at batch 1, and real vLLM 0.15.1 measured 7.0 ms
 *       inter-token latency for this pair.
 *   <li>{@code b} = 20.8 µs per batched token: Microsoft Vidur's H100 profile of the linear layers
 *       of a 7B model ({@code data/profiling/compute/h100/meta-llama/Llama-2-7b-hf/mlp.csv}, one
 *       GPU, medians of every op but attention over 32 layers: 5.6 ms for 1 token, 9.3 / 12.1 /
 *       21.3 / 41.0 / 84.3 ms for 256 / 512 / 1,024 / 2,048 / 4,096 tokens; 20.0–20.8 µs/token at
 *       the power-of-two sizes a full 8,192-token step has, 21.7 µs median over the other sizes
 *       from 1,024; 48k tokens/s). Llama-2-7B and Qwen2.5-7B have about the same non-embedding
 *       weights (6.5B each), so about the same linear FLOPs per token. inference-sim's kernel fit
 *       alone gives 16.8, which makes 512- to 1,024-token chunks 20–30% cheaper than this profile;
 *       the profile's own 5.6 ms floor matches {@code W}.
 * </ul>
 *
 * <p>They give a 256 / 512 / 1,024-token prefill chunk of 7.1 / 12.3 / 23.3 ms (5.6 / 10.8 / 21.8
 * ms without {@code a}: below Vidur's 256- and 512-token figures, where the GPU leaves its
 * weight-read floor more gradually than {@code max}), an 8,192-token prefill of 203 ms (170 ms
 * linear, 31 ms attention), and a decode step of 7.1 ms at batch 1 to 14 ms at batch 256 with 1k
 * context.
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

  /** Qwen2.5-7B-Instruct, BF16, one H100-80GB (a, W, b, c, d, e from the sources above). */
  public static final CostModel QWEN25_7B_H100 =
      new CostModel(1550, 5550, 20.8, 8, 0.0185, 9.2e-4);

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
