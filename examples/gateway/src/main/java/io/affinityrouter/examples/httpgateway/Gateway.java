package io.affinityrouter.examples.httpgateway;

import com.sun.net.httpserver.HttpServer;
import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.core.engine.FleetView;
import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.ReplicaEndpoint;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTP gateway that embeds the router in front of vLLM-compatible backends, on the plain JDK
 * ({@code com.sun.net.httpserver} in, {@code java.net.http.HttpClient} out).
 *
 * <p>Its backends are a core {@link FleetView}: every backend's {@code /metrics} scraped, health
 * from failed scrapes and failed requests ({@link FleetView#reportFailure}), and sleeping models
 * woken with {@code POST /wake_up} when the router asks ({@link FleetView#wakeListener()}). It routes
 * each {@code /v1/chat/completions} and {@code /v1/completions} request with
 * {@link Router#selectAsync} and proxies it ({@link ProxyHandler}). Session bindings live in Redis when
 * {@link GatewayConfig#redisUri()} is set (the {@code "redis"} binding-store provider, found with
 * {@link java.util.ServiceLoader}; the router owns and closes it), else in memory, or in a store the
 * caller passes (several gateways in one JVM sharing one store).
 *
 * <p>Run: {@code java ... Gateway --listen 127.0.0.1:8080 --backend vllm-0=http://127.0.0.1:8001
 * --backend ... [--redis redis://127.0.0.1:6379]} (see {@link GatewayConfig#fromArgs}).
 *
 * <p>Thread-safe. {@link #close()} shuts down gracefully: it stops accepting connections, answers
 * requests arriving on open connections with {@code 503}, lets in-flight requests finish within
 * {@link GatewayConfig#shutdownGrace()}, then releases everything. Idempotent.
 */
public final class Gateway implements AutoCloseable {
  private static final AtomicInteger THREADS = new AtomicInteger();
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

  private final GatewayConfig config;
  private final Router router;
  private final FleetView fleet;
  private final ProxyHandler handler;
  private final HttpServer server;
  private final ExecutorService serverExecutor;
  private final ExecutorService proxyExecutor;
  private final AtomicBoolean closed = new AtomicBoolean();

  private Gateway(GatewayConfig config, BindingStore sharedStore) {
    this.config = config;
    HttpClient client = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(config.connectTimeout())
        .build();
    this.fleet = fleet(config, client);
    AffinityRouter.Builder rb = AffinityRouter.builder()
        .storeTimeout(config.storeTimeout())
        .addListener(fleet.wakeListener());
    if (config.maxInFlightPerBackend() > 0) {
      rb.maxInFlightRequests(config.maxInFlightPerBackend());
    }
    if (sharedStore != null) {
      rb.bindingStore(sharedStore);
    } else if (config.redisUri().isPresent()) {
      rb.bindingStore("redis", Map.of("uri", config.redisUri().get(),
          "timeout-ms", Long.toString(config.storeTimeout().toMillis())));
    }
    this.router = rb.build();
    this.serverExecutor = Executors.newFixedThreadPool(4, daemon("gateway-http-"));
    this.proxyExecutor = Executors.newCachedThreadPool(daemon("gateway-proxy-"));
    this.handler = new ProxyHandler(router, fleet, client, proxyExecutor, config);
    try {
      this.server = HttpServer.create(config.listen(), 1024);
    } catch (IOException e) {
      router.close();
      fleet.close();
      throw new UncheckedIOException("cannot bind " + config.listen(), e);
    }
    server.createContext("/", handler);
    server.setExecutor(serverExecutor);
  }

  /**
   * The backends as a fleet view: scrapes time out after five intervals (at least 1 s), and a
   * failed backend is re-probed after the failure cooldown, doubling up to 30 s.
   */
  private static FleetView fleet(GatewayConfig config, HttpClient client) {
    Duration interval = config.scrapeInterval();
    Duration timeout = interval.multipliedBy(5).compareTo(Duration.ofSeconds(1)) < 0
        ? Duration.ofSeconds(1) : interval.multipliedBy(5);
    Duration cooldown = config.failureCooldown();
    FleetView.Builder b = FleetView.builder().httpClient(client)
        .scrapeInterval(interval).scrapeTimeout(timeout)
        .initialBackoff(cooldown)
        .maxBackoff(cooldown.compareTo(MAX_BACKOFF) > 0 ? cooldown : MAX_BACKOFF);
    config.backends().forEach((id, url) -> b.endpoint(ReplicaEndpoint.builder(id, url).build()));
    return b.build();
  }

  /**
   * Starts a gateway with its own binding store (Redis or in-memory, per the configuration): one
   * scrape of every backend, then it listens.
   *
   * @throws UncheckedIOException if the listen address cannot be bound
   * @throws IllegalArgumentException if the Redis store cannot be created
   */
  public static Gateway start(GatewayConfig config) {
    return start(config, null);
  }

  /**
   * Starts a gateway whose router uses {@code sharedStore} (owned by the caller, not closed here);
   * {@code null} means as {@link #start(GatewayConfig)}.
   *
   * @throws UncheckedIOException if the listen address cannot be bound
   */
  public static Gateway start(GatewayConfig config, BindingStore sharedStore) {
    Gateway g = new Gateway(config, sharedStore);
    g.fleet.scrapeNow().toCompletableFuture().join();
    g.fleet.start();
    g.server.start();
    return g;
  }

  /** The port the gateway listens on. */
  public int port() {
    return server.getAddress().getPort();
  }

  /** {@code http://host:port} of the gateway. */
  public String baseUrl() {
    return "http://" + server.getAddress().getHostString() + ":" + port();
  }

  /** The replicas as the gateway currently sees them. */
  public List<Replica> replicas() {
    return fleet.replicas();
  }

  /** Leases not yet released (requests routed whose response has not ended). */
  public int openLeases() {
    return handler.openLeases();
  }

  /** Requests being served now. */
  public int inFlight() {
    return handler.inFlight();
  }

  /** {@code POST /wake_up} calls sent to backends so far. */
  public long wakeRequestsSent() {
    return fleet.wakeRequestsSent();
  }

  /** Shuts down gracefully within {@link GatewayConfig#shutdownGrace()}. */
  @Override
  public void close() {
    shutdown(config.shutdownGrace());
  }

  /**
   * Stops accepting connections, waits up to {@code grace} for in-flight requests, then stops
   * everything (requests still running are cut). Idempotent.
   *
   * @return whether every in-flight request finished within the grace period
   */
  public boolean shutdown(Duration grace) {
    if (!closed.compareAndSet(false, true)) {
      return true;
    }
    handler.drain();
    fleet.close();
    long deadline = System.nanoTime() + grace.toNanos();
    // HttpServer.stop closes the listener at once, then waits for open exchanges (whole seconds).
    Thread stopper = new Thread(() -> server.stop(
        (int) Math.max(1, (grace.toMillis() + 999) / 1000)), "gateway-stop");
    stopper.setDaemon(true);
    if (handler.inFlight() == 0) {
      server.stop(0);
    } else {
      stopper.start();
    }
    boolean drained = true;
    while (handler.inFlight() > 0) {
      if (System.nanoTime() - deadline >= 0) {
        drained = false;
        break;
      }
      sleepMillis(10);
    }
    if (stopper.isAlive()) {
      try {
        stopper.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    proxyExecutor.shutdownNow();
    serverExecutor.shutdownNow();
    router.close();
    return drained;
  }

  private static void sleepMillis(long ms) {
    try {
      TimeUnit.MILLISECONDS.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static java.util.concurrent.ThreadFactory daemon(String prefix) {
    return r -> {
      Thread t = new Thread(r, prefix + THREADS.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /**
   * Entry point: starts a gateway from the command line and runs until killed (then shuts down
   * gracefully).
   *
   * @throws IllegalArgumentException for bad flags
   */
  public static void main(String[] args) throws InterruptedException {
    GatewayConfig config = GatewayConfig.fromArgs(args);
    Gateway g = start(config);
    System.out.println("gateway listening at " + g.baseUrl() + ", backends " + config.backends()
        + (config.redisUri().isPresent() ? ", bindings in " + config.redisUri().get()
            : ", bindings in memory"));
    Runtime.getRuntime().addShutdownHook(new Thread(g::close));
    new CountDownLatch(1).await();
  }
}
