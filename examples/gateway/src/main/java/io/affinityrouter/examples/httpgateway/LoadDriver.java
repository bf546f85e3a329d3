package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.core.metrics.EngineMetrics;
import io.affinityrouter.core.metrics.ModelMetrics;
import io.affinityrouter.examples.cli.Flags;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.LongAdder;

/**
 * Runs multi-turn chat sessions against one or more gateways (turn {@code t} of a session goes to
 * gateway {@code t mod n}) and prints, per backend, the requests it served and its prefix-cache hit
 * rate over the run, read from its own {@code /metrics} (the
 * {@code vllm:prefix_cache_hits_total / vllm:prefix_cache_queries_total} increase, parsed with the
 * core's {@link EngineMetrics}), plus the status codes and routing reasons the gateways returned
 * and how many sessions more than one backend served (from the {@code x-affinity-replica} header).
 *
 * <p>Run: {@code java ... LoadDriver --gateway http://127.0.0.1:8080 --backend
 * vllm-0=http://127.0.0.1:8001 ... [--sessions 24] [--turns 6] [--concurrency 8]
 * [--system-prompt-chars 4000] [--max-tokens 32] [--model m]}. Prompts are synthetic; nothing is
 * logged but counts.
 */
public final class LoadDriver {
  private final List<String> gateways;
  private final Map<String, URI> backends;
  private final int sessions;
  private final int turns;
  private final int concurrency;
  private final int systemPromptChars;
  private final int maxTokens;
  private final String model;
  private final HttpClient http = HttpClient.newBuilder()
      .version(HttpClient.Version.HTTP_1_1).build();
  private final Map<String, LongAdder> statuses = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> reasons = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> served = new ConcurrentHashMap<>();
  private final LongAdder split = new LongAdder();

  private LoadDriver(Flags f) {
    this.gateways = f.all("gateway");
    if (gateways.isEmpty()) {
      throw new IllegalArgumentException("--gateway: none (expected: at least one URL)");
    }
    this.backends = new LinkedHashMap<>();
    for (String b : f.all("backend")) {
      int eq = b.indexOf('=');
      if (eq <= 0) {
        throw new IllegalArgumentException("--backend: " + b + " (expected: id=url)");
      }
      backends.put(b.substring(0, eq), URI.create(b.substring(eq + 1)));
    }
    this.sessions = positive(f.integer("sessions", 24), "sessions");
    this.turns = positive(f.integer("turns", 6), "turns");
    this.concurrency = positive(f.integer("concurrency", 8), "concurrency");
    this.systemPromptChars = positive(f.integer("system-prompt-chars", 4000),
        "system-prompt-chars");
    this.maxTokens = positive(f.integer("max-tokens", 32), "max-tokens");
    this.model = f.string("model", null);
  }

  /**
   * Entry point.
   *
   * @throws IllegalArgumentException for bad flags
   */
  public static void main(String[] args) throws Exception {
    run(args, System.out);
  }

  /** Runs the load described by {@code args} and prints the report to {@code out}. */
  static void run(String[] args, PrintStream out) throws Exception {
    Flags f = Flags.parse(args, Set.of("gateway", "backend", "sessions", "turns", "concurrency",
        "system-prompt-chars", "max-tokens", "model"));
    new LoadDriver(f).drive(out);
  }

  private void drive(PrintStream out) throws Exception {
    Map<String, double[]> before = scrapeAll();
    long start = System.nanoTime();
    ExecutorService pool = Executors.newFixedThreadPool(concurrency);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int s = 0; s < sessions; s++) {
        int seed = s;
        futures.add(pool.submit(() -> {
          session(seed);
          return null;
        }));
      }
      for (Future<?> fut : futures) {
        fut.get();
      }
    } finally {
      pool.shutdownNow();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    Map<String, double[]> after = scrapeAll();
    out.printf(Locale.ROOT, "%d sessions x %d turns in %.1f s over %d gateway(s)%n", sessions,
        turns, seconds, gateways.size());
    out.println("statuses: " + new TreeMap<>(counts(statuses)));
    out.println("reasons:  " + new TreeMap<>(counts(reasons)));
    out.printf(Locale.ROOT, "sessions on more than one backend: %d of %d%n", split.sum(),
        sessions);
    out.printf(Locale.ROOT, "%-10s %9s %14s %12s %9s%n", "backend", "requests", "prompt tokens",
        "cached", "hit rate");
    double q = 0;
    double h = 0;
    for (String id : backends.keySet()) {
      double[] b = before.getOrDefault(id, new double[2]);
      double[] a = after.getOrDefault(id, new double[2]);
      double queries = a[0] - b[0];
      double hits = a[1] - b[1];
      q += queries;
      h += hits;
      LongAdder n = served.get(id);
      out.printf(Locale.ROOT, "%-10s %9d %14.0f %12.0f %8.1f%%%n", id, n == null ? 0 : n.sum(),
          queries, hits, queries == 0 ? 0 : 100 * hits / queries);
    }
    out.printf(Locale.ROOT, "%-10s %9s %14.0f %12.0f %8.1f%%%n", "all", "", q, h,
        q == 0 ? 0 : 100 * h / q);
  }

  private void session(int seed) throws Exception {
    Conversation c = new Conversation("load-" + seed + "-" + System.nanoTime(), model,
        Conversation.systemPrompt(seed % 4, systemPromptChars));
    java.util.Set<String> replicas = new java.util.HashSet<>();
    for (int t = 1; t <= turns; t++) {
      String gateway = gateways.get(t % gateways.size());
      HttpRequest request = HttpRequest.newBuilder(URI.create(gateway + "/v1/chat/completions"))
          .timeout(Duration.ofSeconds(60))
          .header("Content-Type", "application/json")
          .header(GatewayConfig.DEFAULT_SESSION_HEADER, c.sessionId())
          .POST(HttpRequest.BodyPublishers.ofString(c.next(maxTokens, false)))
          .build();
      HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
      count(statuses, Integer.toString(r.statusCode()));
      r.headers().firstValue("x-affinity-reason").ifPresent(x -> count(reasons, x));
      r.headers().firstValue("x-affinity-replica").ifPresent(x -> {
        count(served, x);
        replicas.add(x);
      });
      if (r.statusCode() == 200) {
        c.answeredFrom(r.body());
      } else {
        c.answered("");
      }
    }
    if (replicas.size() > 1) {
      split.increment();
    }
  }

  /** Each backend's {prefix-cache queries, hits} now; absent when unreachable. */
  private Map<String, double[]> scrapeAll() {
    Map<String, double[]> m = new LinkedHashMap<>();
    backends.forEach((id, url) -> {
      try {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url + "/metrics"))
            .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        double queries = 0;
        double hits = 0;
        for (ModelMetrics mm : EngineMetrics.parse(r.body()).models().values()) {
          queries += mm.prefixCacheQueries().orElse(0);
          hits += mm.prefixCacheHits().orElse(0);
        }
        m.put(id, new double[] {queries, hits});
      } catch (Exception e) {
        // unreachable: left out
      }
    });
    return m;
  }

  private static void count(Map<String, LongAdder> map, String key) {
    map.computeIfAbsent(key, k -> new LongAdder()).increment();
  }

  private static Map<String, Long> counts(Map<String, LongAdder> map) {
    Map<String, Long> m = new LinkedHashMap<>();
    map.forEach((k, v) -> m.put(k, v.sum()));
    return m;
  }

  private static int positive(int value, String flag) {
    if (value <= 0) {
      throw new IllegalArgumentException("--" + flag + ": " + value + " (expected: > 0)");
    }
    return value;
  }
}
