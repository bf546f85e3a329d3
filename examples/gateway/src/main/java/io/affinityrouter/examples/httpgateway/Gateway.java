package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.core.engine.EngineTokenizer;
import io.affinityrouter.core.tokenizer.InProcessTokenizer;
import io.affinityrouter.core.kvevents.KvEventStats;
import io.affinityrouter.spi.Tokenizer;
import java.net.URI;
import java.util.ArrayList;
import io.affinityrouter.Router;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.core.engine.FleetView;
import io.affinityrouter.core.lifecycle.LifecycleState;
import io.affinityrouter.core.lifecycle.ModelLifecycle;
import io.affinityrouter.redis.RedisBindingStore;
import io.affinityrouter.spi.LifecycleLease;
import java.util.HashMap;
import java.util.Optional;
import java.util.UUID;
import io.affinityrouter.examples.micrometer.MicrometerRoutingListener;
import io.affinityrouter.examples.micrometer.ProxyMeters;
import io.affinityrouter.examples.micrometer.TimedBindingStore;
import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.BindingStoreProvider;
import io.affinityrouter.spi.ReplicaEndpoint;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.eclipse.jetty.http.HttpCompliance;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An HTTP gateway that embeds the router in front of vLLM-compatible backends: Jetty's server in
 * (headers parsed without blocking, so slow clients hold no thread), the JDK's
 * {@code java.net.http.HttpClient} out.
 *
 * <p>Its backends are a core {@link FleetView}: every backend's {@code /metrics} scraped, health
 * from failed scrapes and failed requests ({@link FleetView#reportFailure}), and sleeping models
 * woken with {@code POST /wake_up} when the router asks ({@link FleetView#wakeListener()}). It
 * routes each {@code /v1/chat/completions} and {@code /v1/completions} request with
 * {@link Router#selectAsync} and proxies it ({@link ProxyHandler}), lists the backends' models at
 * {@code /v1/models}, and publishes its meters at {@code /metrics} (Prometheus text) and its state
 * at {@code /health} ({@link AdminRoutes}; ready once the fleet view has scraped a backend). Session bindings live in Redis when {@link GatewayConfig#redisUri()} is
 * set (the {@code "redis"} binding-store provider, found with {@link ServiceLoader}), else in
 * memory, or in a store the caller passes (several gateways in one JVM sharing one store).
 *
 * <p>With {@link GatewayConfig.Tokenization#ENGINE}, each request is tokenized by a healthy
 * backend's {@code POST /tokenize} ({@link EngineTokenizer}) and routed on those ids, on its text
 * when that fails; with {@link GatewayConfig.Tokenization#LOCAL}, the same ids are computed in
 * process ({@link InProcessTokenizer}) from the configured models' files; with {@link GatewayConfig#kvEvents()}, the router's prefix index is fed the
 * backends' KV-cache events ({@link FleetView#kvEvents}).
 *
 * <p>With {@link GatewayConfig#claims()}, a {@link ModelLifecycle} over the fleet view puts idle
 * models to sleep on their backends ({@code POST /sleep}) and wakes them where they fit
 * ({@code POST /wake_up}); its listener takes the place of the fleet view's wake listener, and its
 * state is on {@code /metrics} ({@link LifecycleMeters}) and {@code /health}. Of several gateways
 * sharing a Redis store only the holder of the store's lifecycle lease acts.
 *
 * <p>Limits ({@link GatewayConfig}): header block size and field count, header and body read
 * timeouts, connection idle timeout, body size; every refusal is an OpenAI-style JSON error.
 *
 * <p>Run: {@code java ... Gateway --listen 127.0.0.1:8080 --backend vllm-0=http://127.0.0.1:8001
 * --backend ... [--redis redis://127.0.0.1:6379]} (see {@link GatewayConfig#fromArgs}).
 *
 * <p>Thread-safe. {@link #close()} shuts down gracefully: it stops accepting connections, answers
 * requests arriving on open connections with {@code 503}, lets in-flight requests finish within
 * {@link GatewayConfig#shutdownGrace()}, then releases everything. Idempotent.
 */
public final class Gateway implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Gateway.class);
  private static final AtomicInteger THREADS = new AtomicInteger();
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
  private static final long MAX_HELD_BYTES = AffinityRouter.Builder.DEFAULT_MAX_HELD_BYTES;
  /** The lifecycle lease's name: one for every gateway of a deployment sharing a Redis store. */
  static final String LIFECYCLE_LEASE = "gateway-lifecycle";
  private static final int UPSTREAM_THREADS =
      Math.max(2, Runtime.getRuntime().availableProcessors());

  private final GatewayConfig config;
  private final Router router;
  private final BindingStore store;
  private final FleetView fleet;
  private final ModelLifecycle lifecycle; // null: no claims, the fleet view wakes on request
  private final LifecycleLease lifecycleLease; // null with lifecycle
  private final Tokenizer tokenizer; // null: prompts routed on their text
  private final BackendView view;
  private final PrometheusMeterRegistry registry;
  private final ProxyMeters meters;
  private final HeaderDeadline headerDeadline;
  private final ProxyHandler handler;
  private final Server server;
  private final ServerConnector connector;
  private final GracefulHandler graceful;
  private final ExecutorService upstreamExecutor;
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile int port;

  private Gateway(GatewayConfig config, BindingStore sharedStore,
      UnaryOperator<BackendView> decorate) {
    this.config = config;
    HttpClient client = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(config.connectTimeout())
        .build();
    this.registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    this.meters = new ProxyMeters(registry);
    config.backends().keySet().forEach(meters::register);
    this.fleet = fleet(config, client);
    this.view = decorate.apply(BackendView.of(fleet));
    BindingStore rawStore = sharedStore != null ? sharedStore : ownStore(config);
    this.store = TimedBindingStore.wrap(rawStore, registry, sharedStore == null);
    if (config.claims().isEmpty()) {
      this.lifecycleLease = null;
      this.lifecycle = null;
    } else {
      this.lifecycleLease = lifecycleLease(rawStore);
      this.lifecycle = lifecycle(config, fleet, lifecycleLease);
      LifecycleMeters.register(registry, lifecycle, lifecycle.claims());
    }
    AffinityRouter.Builder rb = AffinityRouter.builder()
        .storeTimeout(config.storeTimeout())
        .bindingStore(store)
        // the lifecycle wakes a sleeping model where it fits; without it, where the router asks
        .addListener(lifecycle != null ? lifecycle.listener() : fleet.wakeListener())
        .addListener(new MicrometerRoutingListener(registry));
    if (config.maxInFlightPerBackend() > 0) {
      rb.maxInFlightRequests(config.maxInFlightPerBackend());
    }
    if (!config.maxHold().isZero()) {
      rb.holdQueue(config.maxHeld(), MAX_HELD_BYTES, config.maxHold());
    }
    this.router = rb.build();
    if (!config.kvEvents().isEmpty()) {
      fleet.kvEvents(router.cacheEvents());
    }
    this.tokenizer = switch (config.tokenization()) {
      case ENGINE -> EngineTokenizer.builder(() -> tokenizerEndpoints(config, view))
          .httpClient(client).build();
      case LOCAL -> localTokenizer(config);
      case TEXT -> null;
    };
    meters.heldRequests(router::heldRequests);
    // A scrape that shows room offers the held requests again.
    fleet.addSnapshotListener(list -> router.refresh(view.replicas()));
    // a pod the discovery drops is forgotten at once, its index entries with it
    fleet.addRemovalListener(router::retire);
    // proxying never blocks on its client's threads: a few of them relay every stream at once
    this.upstreamExecutor = Executors.newFixedThreadPool(UPSTREAM_THREADS,
        daemon("gateway-upstream-"));
    HttpClient upstream = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(config.connectTimeout())
        .executor(upstreamExecutor)
        .build();
    this.headerDeadline = new HeaderDeadline(config.headerTimeout());
    QueuedThreadPool threads = new QueuedThreadPool(config.maxThreads(), 8);
    threads.setName("gateway-http");
    threads.setDaemon(true);
    this.handler = new ProxyHandler(router, view, upstream, threads, config, meters, tokenizer);

    this.server = new Server(threads);
    HttpConfiguration http = new HttpConfiguration();
    http.setRequestHeaderSize(config.maxHeaderBytes());
    http.setSendServerVersion(false);
    http.setSendXPoweredBy(false);
    http.setDelayDispatchUntilContent(false); // the body's timeout is the handler's
    // RFC 9110 without bare-LF line ends: a bare CR or LF is a 400, never a second header.
    http.setHttpCompliance(HttpCompliance.STRICT);
    this.connector = new ServerConnector(server, null,
        new ScheduledExecutorScheduler("gateway-scheduler", true), null, -1, -1,
        new HttpConnectionFactory(http));
    connector.setHost(config.listen().getHostString());
    connector.setPort(config.listen().getPort());
    connector.setIdleTimeout(config.idleTimeout().toMillis());
    connector.setAcceptQueueSize(1024);
    connector.addEventListener(headerDeadline);
    server.addConnector(connector);
    ServerErrors errors = new ServerErrors(meters);
    server.setErrorHandler(errors);
    this.graceful = new GracefulHandler(
        new AdminRoutes(handler, headerDeadline, view, registry, closed::get,
            lifecycle == null ? null : lifecycle::state)) {
      @Override
      protected void handleShutdownRejection(Request request, Response response,
          Callback callback) {
        errors.shuttingDown(request, response, callback);
      }
    };
    server.setHandler(graceful);
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
    config.backends().forEach((id, url) -> {
      ReplicaEndpoint.Builder e = ReplicaEndpoint.builder(id, url);
      GatewayConfig.KvEvents events = config.kvEvents().get(id);
      if (events != null) {
        e.kvEventsUri(events.publisher());
        events.replay().ifPresent(e::kvEventsReplayUri);
      }
      b.endpoint(e.build());
    });
    return b.build();
  }

  /**
   * The lifecycle over the fleet view: the claims, each GPU group's memory (a backend, or a host's
   * backends together), acting through the backends' sleep mode while it holds {@code lease}.
   */
  private static ModelLifecycle lifecycle(GatewayConfig config, FleetView fleet,
      LifecycleLease lease) {
    ModelLifecycle.Builder b = ModelLifecycle.builder()
        .claims(config.claims())
        .fleet(fleet)
        .lease(lease)
        .holder(config.gatewayId().orElseGet(() -> "gateway-" + UUID.randomUUID()))
        .interval(config.lifecycleInterval())
        .wakeCooldown(config.wakeCooldown());
    config.gpuMemoryBytes().ifPresent(b::gpuMemoryBytes);
    config.groupGpuMemoryBytes().forEach(b::gpuMemoryBytes);
    if (config.gpuMemoryBytes().isEmpty()) {
      // every group is named (the configuration checked it): the default is never used
      b.gpuMemoryBytes(config.groupGpuMemoryBytes().values().iterator().next());
    }
    if (config.gpuGrouping() == GatewayConfig.GpuGrouping.HOST) {
      Map<String, String> hosts = new HashMap<>();
      config.backends().forEach((id, url) -> hosts.put(id, url.getHost()));
      b.gpuGroup(r -> hosts.getOrDefault(r.id(), r.id()));
    }
    return b.build();
  }

  /**
   * The lease the deployment's gateways share: with a Redis store, the store's (one name for every
   * gateway, so that one of them acts); otherwise this gateway's own.
   */
  private static LifecycleLease lifecycleLease(BindingStore store) {
    if (store instanceof RedisBindingStore redis) {
      return redis.lifecycleLease(LIFECYCLE_LEASE);
    }
    return LifecycleLease.local();
  }

  /** The healthy backends with the models they serve now: whom {@code /tokenize} may ask. */
  private static Tokenizer localTokenizer(GatewayConfig config) {
    InProcessTokenizer.Builder b = InProcessTokenizer.builder();
    config.tokenizerModels().forEach(b::model);
    return b.build();
  }

  private static List<ReplicaEndpoint> tokenizerEndpoints(GatewayConfig config, BackendView view) {
    List<ReplicaEndpoint> out = new ArrayList<>();
    for (Replica r : view.replicas()) {
      URI url = config.backends().get(r.id());
      if (url != null && r.health() == ReplicaHealth.HEALTHY && !r.models().isEmpty()) {
        out.add(ReplicaEndpoint.builder(r.id(), url).models(r.models().keySet()).build());
      }
    }
    return out;
  }

  private static BindingStore ownStore(GatewayConfig config) {
    String name = config.redisUri().isPresent() ? "redis" : "memory";
    Map<String, String> properties = config.redisUri().isPresent()
        // the store's own command timeout stays above every wait of the router's
        ? Map.of("uri", config.redisUri().get())
        : Map.of();
    BindingStoreProvider best = null;
    ServiceConfigurationError failed = null;
    var it = ServiceLoader.load(BindingStoreProvider.class).iterator();
    while (true) {
      BindingStoreProvider p;
      try {
        if (!it.hasNext()) {
          break;
        }
        p = it.next();
      } catch (ServiceConfigurationError e) { // a provider whose class cannot load: skipped
        LOG.warn("a binding-store provider failed to load and is skipped: {}", e.getMessage());
        failed = failed == null ? e : failed;
        continue;
      }
      if (p.name().equals(name) && p.isAvailable()
          && (best == null || p.priority() > best.priority())) {
        best = p;
      }
    }
    if (best == null) {
      IllegalArgumentException e = new IllegalArgumentException("bindingStore: " + name
          + " (expected: a provider on the class path"
          + (failed == null ? "" : "; one failed to load: " + failed.getMessage()) + ")");
      if (failed != null) {
        e.addSuppressed(failed);
      }
      throw e;
    }
    return best.create(properties);
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
    return start(config, sharedStore, UnaryOperator.identity());
  }

  /** As {@link #start(GatewayConfig, BindingStore)}, with the backend view wrapped (tests). */
  static Gateway start(GatewayConfig config, BindingStore sharedStore,
      UnaryOperator<BackendView> decorate) {
    Gateway g = new Gateway(config, sharedStore, decorate);
    g.fleet.scrapeNow().toCompletableFuture().join();
    g.fleet.start();
    if (g.lifecycle != null) {
      g.lifecycle.start(); // its first round at once, over the first scrape
    }
    try {
      g.server.start();
    } catch (Exception e) {
      g.shutdown(Duration.ZERO);
      throw new UncheckedIOException("cannot listen on " + config.listen(),
          e instanceof java.io.IOException ? (java.io.IOException) e
              : new java.io.IOException(e));
    }
    g.port = g.connector.getLocalPort();
    return g;
  }

  /** The port the gateway listens on. */
  public int port() {
    return port;
  }

  /** {@code http://host:port} of the gateway. */
  public String baseUrl() {
    return "http://" + config.listen().getHostString() + ":" + port();
  }

  /** The replicas as the gateway currently sees them. */
  public List<Replica> replicas() {
    return fleet.replicas();
  }

  /** Leases not yet released (requests routed whose response has not ended). */
  public int openLeases() {
    return handler.openLeases();
  }

  /** Requests the router holds now, waiting for room in the fleet. */
  public int heldRequests() {
    return router.heldRequests();
  }

  /** Requests being served now. */
  public int inFlight() {
    return handler.inFlight();
  }

  /** Routed requests to {@code replicaId} whose lease is open. */
  public int inFlight(String replicaId) {
    return meters.inFlight(replicaId);
  }

  /** Connections closed because their client sent headers too slowly, so far. */
  public long slowHeaderConnectionsClosed() {
    return headerDeadline.closedConnections();
  }

  /** What each backend's KV-event subscription has received, by backend id (none without). */
  public Map<String, KvEventStats> kvEventStats() {
    return fleet.kvEventStats();
  }

  /** Requests routed on their text because {@code /tokenize} failed for them, so far. */
  public long tokenizeFallbacks() {
    return handler.tokenizeFallbacks();
  }

  /** The model lifecycle's state, when claims are configured. */
  public Optional<LifecycleState> lifecycleState() {
    return lifecycle == null ? Optional.empty() : Optional.of(lifecycle.state());
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
   * Answers new requests on open connections with {@code 503} ({@link GracefulHandler}), stops
   * accepting connections, waits up to {@code grace} for in-flight requests (the server's stop
   * timeout), then stops everything: requests still running are cut and their leases released
   * before this returns. Idempotent.
   *
   * @return whether every in-flight request finished within the grace period
   */
  public boolean shutdown(Duration grace) {
    if (!closed.compareAndSet(false, true)) {
      return true;
    }
    // refusing before the listener closes: a request that got a connection is answered 503
    CompletableFuture<Void> idle = graceful.shutdown();
    long ms = grace.toMillis();
    server.setStopTimeout(ms);
    boolean drained = ms > 0 || idle.isDone(); // without a stop timeout Jetty does not wait
    try {
      server.stop();
    } catch (TimeoutException e) {
      drained = false; // the grace ran out: what was left has been cut
    } catch (Exception e) {
      LOG.debug("stopping the server", e);
    }
    handler.cutOpen(); // a connection the server dropped may never have told its relay
    if (lifecycle != null) {
      closeLifecycle();
    }
    fleet.close(); // only now: in-flight requests kept their view of the backends
    headerDeadline.close();
    upstreamExecutor.shutdownNow();
    router.close();
    if (tokenizer != null) {
      tokenizer.close();
    }
    store.close();
    registry.close();
    return drained;
  }

  /** Stops the lifecycle's rounds and gives its lease up (close waits briefly for the release). */
  private void closeLifecycle() {
    lifecycle.close();
    lifecycleLease.close();
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
            : ", bindings in memory")
        + (config.claims().isEmpty() ? "" : ", model claims " + config.claims()));
    Runtime.getRuntime().addShutdownHook(new Thread(g::close));
    new CountDownLatch(1).await();
  }
}
