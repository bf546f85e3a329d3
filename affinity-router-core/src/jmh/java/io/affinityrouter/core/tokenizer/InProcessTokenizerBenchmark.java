package io.affinityrouter.core.tokenizer;

import io.affinityrouter.spi.ChatMessage;
import io.affinityrouter.spi.TokenizeRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The in-process tokenizer per chat request: {@code tokenize} (template and encoding, what a
 * gateway pays), and its two halves, {@code render} (the chat template alone) and {@code encode}
 * (the native tokenizer on the rendered text). Conversations of {@code turns} user and assistant
 * pairs (60 and 120 words), on the Llama 3 and Qwen 3 templates and tokenizers. Sample mode gives
 * the percentiles (p99 per request).
 *
 * <p>Needs the models {@code .ci/run} fetches ({@code .tokenizer-models/}, or
 * {@code -Dtokenizer.models=DIR}). Run from the repository root:
 *
 * <pre>
 * java -Dtokenizer.models=.tokenizer-models -jar jmh/target/benchmarks.jar \
 *     '\.InProcessTokenizerBenchmark\.' -bm sample -tu us -prof gc
 * </pre>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"-Xmx1g"})
public class InProcessTokenizerBenchmark {
  private static final String[] WORDS = ("the router keeps each session on the replica that "
      + "holds its cache and moves it only when that replica falls behind by more than the cost "
      + "of recomputing the context elsewhere, so long agent conversations stay warm while the "
      + "fleet stays within its latency objective; tokens blocks prefix hash engine events queue "
      + "load capacity 2024 3.14 naïve 日本語 😀 def f(x): return x + 1").split(" ");

  @Param({"llama3", "qwen3"})
  public String model;

  @Param({"1", "8", "32"})
  public int turns;

  private InProcessTokenizer tokenizer;
  private TokenizeRequest request;
  private ChatTemplate template;
  private Map<String, Object> context;
  private String rendered;

  @Setup(Level.Trial)
  public void setUp() {
    Path dir = Path.of(System.getProperty("tokenizer.models", ".tokenizer-models"), model);
    if (!Files.isRegularFile(dir.resolve("tokenizer.json"))) {
      throw new IllegalStateException(dir + "/tokenizer.json missing: run .ci/run once, or pass "
          + "-Dtokenizer.models=DIR");
    }
    tokenizer = InProcessTokenizer.builder().model(model, dir).build();
    SplittableRandom random = new SplittableRandom(42);
    List<ChatMessage> messages = new ArrayList<>();
    messages.add(ChatMessage.system(words(random, 200)));
    List<Object> chat = new ArrayList<>();
    for (int i = 0; i < turns; i++) {
      messages.add(ChatMessage.user(words(random, 60)));
      if (i < turns - 1) {
        messages.add(ChatMessage.assistant(words(random, 120)));
      }
    }
    for (ChatMessage m : messages) {
      chat.add(Map.of("role", m.role(), "content", m.content()));
    }
    request = TokenizeRequest.chat(model, messages);
    rendered = tokenizer.renderForBenchmark(request);
    template = tokenizer.templateForBenchmark(model);
    context = new HashMap<>();
    context.put("messages", chat);
    context.put("add_generation_prompt", true);
    context.put("tools", null);
    context.put("bos_token", "<|begin_of_text|>");
  }

  private static String words(SplittableRandom random, int n) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < n; i++) {
      b.append(i == 0 ? "" : " ").append(WORDS[random.nextInt(WORDS.length)]);
    }
    return b.toString();
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    tokenizer.close();
  }

  @Benchmark
  public int[] tokenize() {
    return tokenizer.ids(request);
  }

  @Benchmark
  public String render() {
    return template.render(context);
  }

  @Benchmark
  public int[] encode() {
    return tokenizer.encodeForBenchmark(model, rendered);
  }
}
