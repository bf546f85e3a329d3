package io.affinityrouter.examples.fakevllm;

import io.affinityrouter.examples.openai.CompletionRequest;
import io.affinityrouter.core.tokenizer.InProcessTokenizer;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * The simulated engine behind a {@link FakeVllmServer}: admission (at most {@code maxNumSeqs}
 * running, the rest waiting), the prefix cache, the latency model, sleep state, and the counters its
 * {@code /metrics} reports.
 *
 * <p>Thread-safe: one engine serves all of the server's threads.
 */
final class FakeEngine {
  private static final String[] WORDS = {
    " the", " cache", " holds", " a", " prefix", " of", " blocks", " and", " routes", " tokens",
    " to", " warm", " replicas", " while", " load", " stays", " even"
  };

  private final FakeVllmConfig config;
  private final PrefixCache cache;
  private final Semaphore slots;
  private final AtomicInteger running = new AtomicInteger();
  private final AtomicInteger waiting = new AtomicInteger();
  private final AtomicLong blocksInUse = new AtomicLong();
  private final LongAdder promptTokens = new LongAdder();
  private final LongAdder generationTokens = new LongAdder();
  private final LongAdder prefixQueries = new LongAdder();
  private final LongAdder prefixHits = new LongAdder();
  private final LongAdder finished = new LongAdder();
  private final LongAdder aborted = new LongAdder();
  private final LongAdder wakeUps = new LongAdder();
  private final LongAdder sleeps = new LongAdder();
  private volatile int sleepLevel; // 0 awake, 1 weights offloaded, 2 everything discarded

  private final KvEventPublisher events; // null: the engine publishes none
  private final InProcessTokenizer tokenizer; // null: FakeTokenizer's character tokens

  FakeEngine(FakeVllmConfig config) {
    this(config, null);
  }

  /** An engine whose cache changes go to {@code events} (null: none). */
  FakeEngine(FakeVllmConfig config, KvEventPublisher events) {
    this.config = config;
    this.events = events;
    this.cache = new PrefixCache(config.blockChars(), config.numGpuBlocks(), events);
    this.slots = new Semaphore(config.maxNumSeqs(), true);
    this.tokenizer = config.tokenizerDir()
        .map(dir -> InProcessTokenizer.builder().model(config.model(), dir).build())
        .orElse(null);
  }

  /** The ids this engine computes for {@code request} (its {@code /tokenize} answer). */
  int[] tokens(CompletionRequest request) {
    return FakeTokenizer.tokens(request, tokenizer, config.model());
  }

  /** Frees the tokenizer's native memory. */
  void close() {
    if (tokenizer != null) {
      tokenizer.close();
    }
  }

  FakeVllmConfig config() {
    return config;
  }

  /**
   * Admits a request (waiting for a running slot if all are taken), looks its prompt up in the
   * prefix cache and returns its generation, which the caller must {@link Generation#finish}.
   *
   * @throws InterruptedException if interrupted while waiting for a slot
   */
  Generation start(CompletionRequest request) throws InterruptedException {
    waiting.incrementAndGet();
    try {
      slots.acquire();
    } finally {
      waiting.decrementAndGet();
    }
    running.incrementAndGet();
    String prompt = request.promptText();
    int tokens;
    int hitBlocks;
    if (tokenizer != null) {
      // a real tokenizer: the cache holds blocks of its ids, as vLLM's does
      int[] ids = tokens(request);
      tokens = Math.max(1, ids.length);
      hitBlocks = cache.lookupAndStore(PrefixCache.blockHashes(ids, config.blockSize()),
          events != null ? ids : null, config.blockSize());
    } else {
      tokens = Math.max(1, (prompt.length() + FakeVllmConfig.CHARS_PER_TOKEN - 1)
          / FakeVllmConfig.CHARS_PER_TOKEN);
      hitBlocks = cache.lookupAndStore(cache.blockHashes(prompt),
          events != null ? tokens(request) : null, config.blockSize());
    }
    int cachedTokens = Math.min(tokens, hitBlocks * config.blockSize());
    promptTokens.add(tokens);
    prefixQueries.add(tokens);
    prefixHits.add(cachedTokens);
    int output = request.maxTokens().orElse(config.defaultMaxTokens());
    long blocks = (tokens + output + config.blockSize() - 1) / config.blockSize();
    blocksInUse.addAndGet(blocks);
    double scale = config.latencyScale() * 1000; // µs to ns
    long prefillNanos = (long) ((tokens - cachedTokens) * config.prefillMicrosPerToken() * scale);
    long decodeNanos = (long) (config.decodeMicrosPerToken() * scale);
    return new Generation(tokens, cachedTokens, output, prefillNanos, decodeNanos, blocks);
  }

  /** Whether the engine sleeps (and refuses requests). */
  boolean isSleeping() {
    return sleepLevel > 0;
  }

  /** vLLM's {@code POST /sleep?level=}: 1 offloads weights, 2 also discards the KV cache. */
  void sleep(int level) {
    if (level != 1 && level != 2) {
      throw new IllegalArgumentException("level: " + level + " (expected: 1 or 2)");
    }
    if (level == 2) {
      cache.clear();
    }
    sleeps.increment();
    sleepLevel = level;
  }

  /** vLLM's {@code POST /wake_up}. */
  void wakeUp() {
    wakeUps.increment();
    sleepLevel = 0;
  }

  int sleepLevel() {
    return sleepLevel;
  }

  int running() {
    return running.get();
  }

  int waiting() {
    return waiting.get();
  }

  double kvUsage() {
    return Math.min(1.0, blocksInUse.get() / (double) config.numGpuBlocks());
  }

  long promptTokens() {
    return promptTokens.sum();
  }

  long generationTokens() {
    return generationTokens.sum();
  }

  long prefixQueries() {
    return prefixQueries.sum();
  }

  long prefixHits() {
    return prefixHits.sum();
  }

  long finished() {
    return finished.sum();
  }

  long aborted() {
    return aborted.sum();
  }

  long sleeps() {
    return sleeps.sum();
  }

  long wakeUps() {
    return wakeUps.sum();
  }

  /** One admitted request: its sizes, its latency plan, and the words it generates. */
  final class Generation {
    final int promptTokens;
    final int cachedTokens;
    final int outputTokens;
    final long prefillNanos;
    final long decodeNanosPerToken;
    private final long blocks;
    private boolean done;

    private Generation(int promptTokens, int cachedTokens, int outputTokens, long prefillNanos,
        long decodeNanosPerToken, long blocks) {
      this.promptTokens = promptTokens;
      this.cachedTokens = cachedTokens;
      this.outputTokens = outputTokens;
      this.prefillNanos = prefillNanos;
      this.decodeNanosPerToken = decodeNanosPerToken;
      this.blocks = blocks;
    }

    /** The text of output token {@code i}. */
    String token(int i) {
      return WORDS[(promptTokens + i) % WORDS.length];
    }

    /** Counts one generated token. */
    void emitted() {
      generationTokens.increment();
    }

    /** Releases the running slot; {@code completed} false counts the request as aborted. */
    synchronized void finish(boolean completed) {
      if (done) {
        return;
      }
      done = true;
      (completed ? finished : aborted).increment();
      blocksInUse.addAndGet(-blocks);
      running.decrementAndGet();
      slots.release();
    }
  }
}
