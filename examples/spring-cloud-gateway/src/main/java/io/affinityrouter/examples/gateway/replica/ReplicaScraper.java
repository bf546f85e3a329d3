package io.affinityrouter.examples.gateway.replica;

import io.affinityrouter.Replica;
import io.affinityrouter.examples.gateway.config.AffinityRouterProperties;
import java.net.URI;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;

/**
 * Turns Spring Cloud {@link ServiceInstance}s into router {@link Replica}s, keeping each one's load
 * and model states fresh by scraping its Prometheus {@code /metrics} (vLLM or SGLang names) every
 * {@code affinity-router.scrape.interval}, parsed with the core's
 * {@link io.affinityrouter.core.metrics.EngineMetrics} and
 * {@link io.affinityrouter.core.metrics.ThroughputTracker}.
 *
 * <p>A replica is tracked from the first time a load balancer lists it ({@link #replicas}) until no
 * service has listed it for {@link #FORGET_AFTER}. Before its first scrape it is healthy with an
 * unknown load, serving any model. After {@code unhealthy-after-failures} consecutive failed scrapes
 * (or connections refused to a forwarded request, {@link #connectFailed}) it is
 * {@link io.affinityrouter.ReplicaHealth#UNHEALTHY}, so the router moves its sessions; the next
 * successful scrape makes it healthy again, ramping up from that time.
 *
 * <p>Thread-safe. {@link #replicas} is called on the event loop for every routed request: it reads
 * volatile snapshots and never blocks. Scrapes are asynchronous (Reactor Netty), at most one in
 * flight per replica.
 */
public final class ReplicaScraper implements AutoCloseable {
  /** How long a replica no load balancer lists any more stays tracked: 5 minutes. */
  public static final Duration FORGET_AFTER = Duration.ofMinutes(5);
  /** The largest {@code /metrics} body read: 16 MiB (vLLM's histograms make bodies of ~100 KiB). */
  public static final int MAX_BODY_BYTES = 16 << 20;

  private static final Log log = LogFactory.getLog(ReplicaScraper.class);

  private final WebClient client;
  private final AffinityRouterProperties.Scrape config;
  private final InstantSource clock;
  private final Map<String, TrackedReplica> tracked = new ConcurrentHashMap<>();
  private volatile @Nullable Disposable loop;

  /**
   * Creates a scraper; call {@link #start()} to begin scraping.
   *
   * @param webClient builds the (not load-balanced) client used for scrapes
   * @param config the scrape settings
   * @param clock the wall clock of replicas' ready-since times
   */
  public ReplicaScraper(WebClient.Builder webClient, AffinityRouterProperties.Scrape config,
      InstantSource clock) {
    this.client = webClient.clone()
        .codecs(c -> c.defaultCodecs().maxInMemorySize(MAX_BODY_BYTES))
        .build();
    this.config = Objects.requireNonNull(config, "config");
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /** The id a replica gets for an instance: its instance id, else {@code host:port}. */
  public static String replicaId(ServiceInstance instance) {
    String id = instance.getInstanceId();
    return id != null && !id.isBlank() ? id : instance.getHost() + ":" + instance.getPort();
  }

  /** Starts the periodic scrape loop. Idempotent. */
  public synchronized void start() {
    if (loop == null) {
      loop = Flux.interval(Duration.ZERO, config.interval())
          .onBackpressureDrop()
          .subscribe(tick -> scrapeAll(), e -> log.error("scrape loop stopped", e));
    }
  }

  /**
   * Returns the replicas for {@code instances}, in order, each with its last scraped state, and
   * starts tracking the ones not seen before. Instances sharing a replica id appear once.
   */
  public List<Replica> replicas(List<ServiceInstance> instances) {
    long now = System.nanoTime();
    List<Replica> out = new ArrayList<>(instances.size());
    for (ServiceInstance instance : instances) {
      TrackedReplica t = track(instance, now);
      Replica r = t.current();
      if (!containsId(out, r.id())) {
        out.add(r);
      }
    }
    return out;
  }

  /** The last state of the replica with this id, if tracked. */
  public Optional<Replica> replica(String replicaId) {
    TrackedReplica t = tracked.get(replicaId);
    return t == null ? Optional.empty() : Optional.of(t.current());
  }

  /** The ids of the replicas tracked now; unmodifiable. */
  public List<String> trackedIds() {
    return Collections.unmodifiableList(new ArrayList<>(tracked.keySet()));
  }

  /**
   * Records that a forwarded request could not connect to the replica: it counts as a failed
   * scrape, so a replica that went away is marked unhealthy without waiting for more scrapes.
   */
  public void connectFailed(String replicaId) {
    TrackedReplica t = tracked.get(replicaId);
    if (t != null && t.failed()) {
      log.info("replica " + replicaId + " is unhealthy: " + config.unhealthyAfterFailures()
          + " failures in a row, the last a refused connection");
    }
  }

  private TrackedReplica track(ServiceInstance instance, long nowNanos) {
    String id = replicaId(instance);
    TrackedReplica t = tracked.get(id);
    if (t == null) {
      t = tracked.computeIfAbsent(id, k -> new TrackedReplica(k, instance.getUri(), clock.instant(),
          config.unhealthyAfterFailures(), nowNanos));
    }
    t.listed(nowNanos);
    return t;
  }

  private static boolean containsId(List<Replica> replicas, String id) {
    for (Replica r : replicas) {
      if (r.id().equals(id)) {
        return true;
      }
    }
    return false;
  }

  private void scrapeAll() {
    long now = System.nanoTime();
    tracked.values().removeIf(t -> now - t.lastListedNanos() > FORGET_AFTER.toNanos());
    for (TrackedReplica t : tracked.values()) {
      if (t.tryStartScrape()) {
        scrape(t);
      }
    }
  }

  private void scrape(TrackedReplica t) {
    URI target = t.uri().resolve(config.path());
    client.get().uri(target).retrieve().bodyToMono(String.class)
        .defaultIfEmpty("")
        .timeout(config.timeout())
        .doOnCancel(t::scrapeAbandoned)
        .subscribe(
            body -> t.scraped(body, clock.instant(), System.nanoTime()),
            error -> {
              if (t.failed()) {
                log.info("replica " + t.id() + " is unhealthy: " + config.unhealthyAfterFailures()
                    + " failures in a row, the last a scrape: " + error);
              }
            });
  }

  /** Stops the scrape loop. Idempotent. */
  @Override
  public synchronized void close() {
    Disposable l = loop;
    loop = null;
    if (l != null) {
      l.dispose();
    }
  }
}
