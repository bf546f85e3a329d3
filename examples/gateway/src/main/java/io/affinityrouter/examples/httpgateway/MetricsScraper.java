package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.core.metrics.EngineMetrics;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Scrapes every backend's {@code /metrics} periodically and feeds the result, read with the core's
 * {@link EngineMetrics#parse}, into the {@link BackendPool}: load, KV usage and capacity, output
 * rate (from the generation-token counter), model states (sleeping or awake). A scrape that fails,
 * times out or answers non-200 counts against the backend's health ({@link BackendPool#scrapeFailed}).
 *
 * <p>One round at a time: the next round starts an interval after the previous one ended, so a
 * slow backend cannot pile scrapes up. Thread-safe; {@link #close()} is idempotent.
 */
final class MetricsScraper implements AutoCloseable {
  private final BackendPool pool;
  private final HttpClient client;
  private final Duration interval;
  private final Duration timeout;
  private final ScheduledExecutorService timer;
  private final AtomicBoolean closed = new AtomicBoolean();

  MetricsScraper(BackendPool pool, HttpClient client, Duration interval) {
    this.pool = pool;
    this.client = client;
    this.interval = interval;
    this.timeout = interval.multipliedBy(5).compareTo(Duration.ofSeconds(1)) < 0
        ? Duration.ofSeconds(1) : interval.multipliedBy(5);
    this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "gateway-scraper");
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Scrapes every backend once, waiting for the answers (used at start-up, with a longer timeout:
   * a backend that does not answer then stays unhealthy until a periodic scrape succeeds).
   */
  void scrapeNow() {
    round(Duration.ofSeconds(5)).join();
  }

  /** Starts the periodic scrapes. */
  void start() {
    timer.schedule(this::loop, interval.toNanos(), TimeUnit.NANOSECONDS);
  }

  private void loop() {
    if (closed.get()) {
      return;
    }
    round(timeout).whenComplete((v, e) -> {
      if (!closed.get()) {
        try {
          timer.schedule(this::loop, interval.toNanos(), TimeUnit.NANOSECONDS);
        } catch (java.util.concurrent.RejectedExecutionException ignored) {
          // closed meanwhile
        }
      }
    });
  }

  private CompletableFuture<Void> round(Duration timeout) {
    List<CompletableFuture<?>> all = new ArrayList<>();
    for (BackendPool.Backend b : pool.backends()) {
      HttpRequest request = HttpRequest.newBuilder(URI.create(b.baseUrl + "/metrics"))
          .timeout(timeout).GET().build();
      all.add(client.sendAsync(request, HttpResponse.BodyHandlers.ofString())
          .handle((response, error) -> {
            if (error == null && response.statusCode() == 200) {
              pool.scraped(b.id, EngineMetrics.parse(response.body()), System.nanoTime());
            } else {
              Throwable cause = error instanceof java.util.concurrent.CompletionException
                  && error.getCause() != null ? error.getCause() : error;
              pool.scrapeFailed(b.id, cause instanceof java.net.ConnectException);
            }
            return null;
          }));
    }
    return CompletableFuture.allOf(all.toArray(new CompletableFuture<?>[0]));
  }

  @Override
  public void close() {
    if (closed.compareAndSet(false, true)) {
      timer.shutdownNow();
    }
  }
}
