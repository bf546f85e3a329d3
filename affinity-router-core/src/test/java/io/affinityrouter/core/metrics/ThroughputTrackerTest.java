package io.affinityrouter.core.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ThroughputTrackerTest {
  private static final long SECOND = 1_000_000_000L;
  private static final String MODEL = "Qwen/Qwen2.5-Coder-1.5B-Instruct";

  /** The real V0 capture with its generation counter set to {@code tokens}. */
  private static EngineMetrics vllmScrape(double tokens) {
    String text = Fixtures.read(Fixtures.VLLM_V0_AIBRIX).replace(
        "vllm:generation_tokens_total{model_name=\"" + MODEL + "\"} 955.0",
        "vllm:generation_tokens_total{model_name=\"" + MODEL + "\"} " + tokens);
    EngineMetrics m = EngineMetrics.parseStrict(text);
    assertThat(m.model(MODEL).orElseThrow().generationTokens()).hasValue(tokens);
    return m;
  }

  private static double rate(EngineMetrics m) {
    return m.model(MODEL).orElseThrow().load().outputTokensPerSecond();
  }

  @Test
  void ratesComeFromCounterIncreasesOverInjectedTime() {
    ThroughputTracker tracker = new ThroughputTracker();
    long t0 = 123_456_789L;

    EngineMetrics first = tracker.update(vllmScrape(955), t0);
    EngineMetrics second = tracker.update(vllmScrape(1455), t0 + 2 * SECOND);
    EngineMetrics third = tracker.update(vllmScrape(1555), t0 + 2 * SECOND + SECOND / 2);

    assertThat(rate(first)).as("one scrape gives no rate").isZero();
    assertThat(rate(second)).isEqualTo(250.0);
    assertThat(rate(third)).isEqualTo(200.0);
    assertThat(third.replicaLoad().outputTokensPerSecond()).isEqualTo(200.0);
    assertThat(third.models().get(MODEL).load().kvCapacityTokens()).isEqualTo(16L * 81767);
    assertThat(third.models().get(MODEL).preemptions()).as("the other figures stay")
        .isEqualTo(vllmScrape(1555).models().get(MODEL).preemptions()).hasValue(0.0);
  }

  @Test
  void counterResetCountsTheNewValueAsTheIncrease() {
    ThroughputTracker tracker = new ThroughputTracker();
    tracker.update(vllmScrape(10_000), 0);

    EngineMetrics afterRestart = tracker.update(vllmScrape(300), SECOND);
    EngineMetrics next = tracker.update(vllmScrape(400), 2 * SECOND);

    assertThat(rate(afterRestart)).isEqualTo(300.0);
    assertThat(rate(next)).isEqualTo(100.0);
  }

  @Test
  void repeatedOrOlderScrapesKeepThePreviousRateAndBaseline() {
    ThroughputTracker tracker = new ThroughputTracker();
    tracker.update(vllmScrape(0), 10 * SECOND);
    tracker.update(vllmScrape(100), 11 * SECOND);

    EngineMetrics repeated = tracker.update(vllmScrape(5000), 11 * SECOND);
    EngineMetrics older = tracker.update(vllmScrape(7000), 9 * SECOND);
    EngineMetrics later = tracker.update(vllmScrape(300), 12 * SECOND);

    assertThat(rate(repeated)).isEqualTo(100.0);
    assertThat(rate(older)).isEqualTo(100.0);
    assertThat(rate(later)).as("from the baseline at 11 s, 100 tokens").isEqualTo(200.0);
  }

  @Test
  void timesAreComparedBySubtractionSoNanoTimeWrapAroundWorks() {
    ThroughputTracker tracker = new ThroughputTracker();
    tracker.update(vllmScrape(0), Long.MAX_VALUE - SECOND / 2);

    EngineMetrics wrapped = tracker.update(vllmScrape(50), Long.MIN_VALUE + SECOND / 2 - 1);

    assertThat(rate(wrapped)).isEqualTo(50.0);
  }

  @Test
  void sglangsOwnThroughputGaugeIsKept() {
    ThroughputTracker tracker = new ThroughputTracker();
    String docs = Fixtures.read(Fixtures.SGLANG_DOCS);
    tracker.update(EngineMetrics.parseStrict(docs), 0);

    EngineMetrics later = tracker.update(EngineMetrics.parseStrict(
        docs.replace("} 7.557572e+06", "} 7.657572e+06")), SECOND);

    assertThat(later.model("meta-llama/Llama-3.1-8B-Instruct").orElseThrow()
        .generationTokens()).hasValue(7_657_572.0);
    assertThat(later.replicaLoad().outputTokensPerSecond()).isEqualTo(86.50814177726902);
  }

  @Test
  void aModelMissingFromAScrapeStartsOverWhenItReturns() {
    ThroughputTracker tracker = new ThroughputTracker();
    tracker.update(vllmScrape(0), 0);
    tracker.update(EngineMetrics.parse(""), SECOND);

    EngineMetrics back = tracker.update(vllmScrape(1000), 2 * SECOND);

    assertThat(rate(back)).isZero();
    assertThat(rate(tracker.update(vllmScrape(1100), 3 * SECOND))).isEqualTo(100.0);
  }

  @Test
  void concurrentUpdatesNeverYieldAWrongRate() throws Exception {
    // The counter grows at exactly 1000 tokens/s of the injected clock, so any pair of scrapes
    // the tracker compares must give 1000, whatever order the threads deliver them in.
    ThroughputTracker tracker = new ThroughputTracker();
    AtomicLong clock = new AtomicLong();
    List<EngineMetrics> scrapes = new ArrayList<>();
    for (int i = 0; i < 800; i++) {
      scrapes.add(vllmScrape(i * 50.0)); // taken every 50 ms
    }
    int threads = 4;
    CountDownLatch start = new CountDownLatch(1);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<List<Double>>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        results.add(pool.submit(() -> {
          start.await();
          List<Double> rates = new ArrayList<>();
          for (int i = 0; i < 200; i++) {
            int step = (int) clock.getAndIncrement();
            rates.add(rate(tracker.update(scrapes.get(step), step * 50_000_000L)));
          }
          return rates;
        }));
      }
      start.countDown();
      int derived = 0;
      for (Future<List<Double>> result : results) {
        for (double r : result.get(30, TimeUnit.SECONDS)) {
          if (r != 0) {
            assertThat(r).isCloseTo(1000.0, within(1e-6));
            derived++;
          }
        }
      }
      assertThat(derived).isGreaterThan(threads * 200 / 2);
    } finally {
      pool.shutdownNow();
    }
  }
}
