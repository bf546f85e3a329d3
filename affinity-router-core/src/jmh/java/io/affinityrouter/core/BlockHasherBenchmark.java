package io.affinityrouter.core;

import io.affinityrouter.RoutingRequest;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Chained block hashing of a prompt ({@link BlockHasher#hash(RoutingRequest, long[])}) against a
 * plain {@link Arrays#hashCode} pass over the same data, in the same run: token ids
 * ({@code int[]}) and text ({@code promptTokens × 4} characters, the router's chars-per-token
 * estimate, so both cover the same number of blocks; the text baseline hashes the same characters
 * as a {@code char[]}).
 *
 * <p>Goal: hashing ≥ 0.5× the throughput of the {@code Arrays.hashCode} pass, i.e.
 * {@code hashTokens ≤ 2 × arraysHashCodeTokens} in time per operation (and the same for text).
 *
 * <pre>
 * java -jar jmh/target/benchmarks.jar BlockHasherBenchmark -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class BlockHasherBenchmark {
  @Param({"1024", "8192", "32768"})
  int promptTokens;

  private final BlockHasher hasher = BlockHasher.defaults();
  private RoutingRequest tokenRequest;
  private RoutingRequest textRequest;
  private int[] tokens;
  private char[] chars;
  private long[] out;

  /** Draws the prompt (token ids and text) from a fixed seed. */
  @Setup
  public void setUp() {
    SplittableRandom random = new SplittableRandom(3);
    tokens = new int[promptTokens];
    for (int i = 0; i < tokens.length; i++) {
      tokens[i] = random.nextInt(128_256);
    }
    StringBuilder text = new StringBuilder(promptTokens * 4);
    while (text.length() < promptTokens * 4) {
      int word = 1 + random.nextInt(9);
      for (int i = 0; i < word; i++) {
        text.append((char) ('a' + random.nextInt(26)));
      }
      text.append(' ');
    }
    text.setLength(promptTokens * 4);
    chars = text.toString().toCharArray();
    tokenRequest = RoutingRequest.builder().model("m").promptTokens(tokens).build();
    textRequest = RoutingRequest.builder().model("m").promptText(text).build();
    out = new long[BlockHasher.DEFAULT_MAX_PROMPT_BLOCKS];
  }

  /** Chained block hashes of the token prompt. */
  @Benchmark
  public long hashTokens() {
    int n = hasher.hash(tokenRequest, out);
    return out[n - 1];
  }

  /** {@code Arrays.hashCode} over the same token ids. */
  @Benchmark
  public int arraysHashCodeTokens() {
    return Arrays.hashCode(tokens);
  }

  /** Chained block hashes of the text prompt. */
  @Benchmark
  public long hashText() {
    int n = hasher.hash(textRequest, out);
    return out[n - 1];
  }

  /** {@code Arrays.hashCode} over the same characters. */
  @Benchmark
  public int arraysHashCodeText() {
    return Arrays.hashCode(chars);
  }
}
