package io.affinityrouter.core.engine;

import io.affinityrouter.Replica;
import io.affinityrouter.core.engine.TrackedReplica.Failure;
import io.affinityrouter.core.engine.TrackedReplica.Scrape;
import io.affinityrouter.core.metrics.EngineMetrics;
import io.affinityrouter.spi.ReplicaEndpoint.Engine;
import io.affinityrouter.spi.ReplicaEndpoint;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A {@link FleetView}'s replicas and their scrapes: the tracked replicas in discovery order, the
 * published snapshot, and the scrape of each replica from request to settled outcome (the answer,
 * the timeout watchdog, a removal or close: whichever comes first).
 *
 * <p>Thread-safe: state changes under one lock, which is never held across I/O or while user
 * callbacks run; {@link #snapshot()} is a volatile read.
 */
final class FleetState {
  private final FleetSettings settings;
  private final HttpClient client;
  private final ScheduledExecutorService scheduler;
  private final Backoff backoff;
  private final AtomicBoolean closed;
  private final Object lock = new Object();
  private volatile Consumer<List<ReplicaEndpoint>> onEndpoints = e -> {}; // KV-event feeds
  private Map<String, TrackedReplica> tracked = new LinkedHashMap<>(); // guarded by lock
  private volatile List<Replica> snapshot = List.of();
  private final List<Consumer<? super List<Replica>>> snapshotListeners =
      new CopyOnWriteArrayList<>();
  private final AtomicLong lastListenerLog =
      new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong lastDiscoveryLog = new AtomicLong(Long.MIN_VALUE);
  private final List<Consumer<? super String>> removalListeners = new CopyOnWriteArrayList<>();
  private final AtomicLong lastRemovalLog = new AtomicLong(Long.MIN_VALUE);
  final CompletableFuture<List<Replica>> first = new CompletableFuture<>();

  FleetState(FleetSettings settings, HttpClient client, ScheduledExecutorService scheduler,
      AtomicBoolean closed) {
    this.settings = settings;
    this.client = client;
    this.scheduler = scheduler;
    this.closed = closed;
    this.backoff = new Backoff(settings.initialBackoff().toNanos(), settings.maxBackoff().toNanos(),
        settings.backoffJitter(), settings.random());
  }

  List<Replica> snapshot() {
    return snapshot;
  }

  void addSnapshotListener(Consumer<? super List<Replica>> listener) {
    snapshotListeners.add(listener);
  }

  void addRemovalListener(Consumer<? super String> listener) {
    removalListeners.add(listener);
  }

  private void removed(List<String> ids) {
    for (String id : ids) {
      callEach(removalListeners, id, lastRemovalLog, "a removal listener");
    }
  }

  private void published(List<Replica> list) {
    callEach(snapshotListeners, list, lastListenerLog, "a snapshot listener");
  }

  /** Calls each listener; one that throws is logged, at most every 10 s, and the rest still run. */
  private static <T> void callEach(List<Consumer<? super T>> listeners, T value, AtomicLong lastLog,
      String what) {
    for (Consumer<? super T> l : listeners) {
      try {
        l.accept(value);
      } catch (RuntimeException e) { // the listener's own failure: the view goes on
        long now = System.nanoTime();
        long last = lastLog.get();
        if ((last == Long.MIN_VALUE || now - last >= 10_000_000_000L)
            && lastLog.compareAndSet(last, now)) {
          System.getLogger(FleetView.class.getName()).log(System.Logger.Level.WARNING,
              what + " failed (logged at most every 10 s)", e);
        }
      }
    }
  }

  /** The tracked replica with this id, if any. */
  @Nullable TrackedReplica tracked(String replicaId) {
    synchronized (lock) {
      return tracked.get(replicaId);
    }
  }

  /** Applies a memory release or resume the view made (SGLang), and publishes it at once. */
  void memoryReleased(TrackedReplica t, boolean released) {
    List<Replica> firstList;
    synchronized (lock) {
      if (tracked.get(t.endpoint.id()) != t || closed.get()) {
        return;
      }
      t.memoryReleased(released);
      firstList = publish();
    }
    completeFirst(firstList);
  }

  /** Applies a failed request the gateway reported. */
  void reportFailure(String replicaId) {
    List<Replica> firstList;
    synchronized (lock) {
      TrackedReplica t = tracked.get(replicaId);
      if (t == null || closed.get()) {
        return;
      }
      t.passiveFailure(settings.ticker().getAsLong());
      firstList = publish();
    }
    completeFirst(firstList);
  }

  /** Cancels every scrape in flight (on close). */
  void abandonAll() {
    List<Scrape> inFlight = new ArrayList<>();
    synchronized (lock) {
      for (TrackedReplica t : tracked.values()) {
        if (t.inFlight != null) {
          inFlight.add(t.inFlight);
          t.inFlight = null;
        }
      }
    }
    inFlight.forEach(FleetState::abandon);
  }

  void pollDiscovery() {
    List<ReplicaEndpoint> endpoints;
    try {
      endpoints = Objects.requireNonNull(settings.discovery().endpoints(), "endpoints");
    } catch (RuntimeException e) { // unknown now: keep the set we have
      long now = System.nanoTime();
      long last = lastDiscoveryLog.get();
      if ((last == Long.MIN_VALUE || now - last >= 10_000_000_000L)
          && lastDiscoveryLog.compareAndSet(last, now)) {
        System.getLogger(FleetView.class.getName()).log(System.Logger.Level.WARNING,
            "replica discovery failed; the known replicas stay (logged at most every 10 s)", e);
      }
      return;
    }
    applyEndpoints(endpoints);
  }

  void applyEndpoints(List<ReplicaEndpoint> endpoints) {
    List<Replica> firstList;
    List<String> gone = new ArrayList<>();
    synchronized (lock) {
      if (closed.get()) {
        return;
      }
      Map<String, TrackedReplica> next = new LinkedHashMap<>();
      for (ReplicaEndpoint e : endpoints) {
        if (e == null || next.containsKey(e.id())) {
          continue;
        }
        TrackedReplica t = tracked.get(e.id());
        next.put(e.id(), t != null && t.endpoint.equals(e) ? t
            : new TrackedReplica(e, settings.failuresToUnhealthy(), backoff));
      }
      for (TrackedReplica old : tracked.values()) {
        if (next.get(old.endpoint.id()) != old && old.inFlight != null) {
          abandon(old.inFlight);
          old.inFlight = null;
        }
        if (!next.containsKey(old.endpoint.id())) {
          gone.add(old.endpoint.id());
        }
      }
      tracked = next;
      firstList = publish();
    }
    completeFirst(firstList);
    removed(gone);
    onEndpoints.accept(endpoints());
  }

  /** The endpoints tracked now, in discovery order. */
  List<ReplicaEndpoint> endpoints() {
    synchronized (lock) {
      List<ReplicaEndpoint> out = new ArrayList<>(tracked.size());
      tracked.values().forEach(t -> out.add(t.endpoint));
      return out;
    }
  }

  /** Called (outside the lock) with the endpoints after every change of the set. */
  void onEndpoints(Consumer<List<ReplicaEndpoint>> listener) {
    this.onEndpoints = listener;
  }

  /** Starts a scrape of every due replica; returns the scrapes in flight (new and old). */
  List<CompletableFuture<Void>> scrapeDue() {
    List<CompletableFuture<Void>> all = new ArrayList<>();
    List<TrackedReplica> start = new ArrayList<>();
    List<Scrape> scrapes = new ArrayList<>();
    synchronized (lock) {
      if (closed.get()) {
        return all;
      }
      long now = settings.ticker().getAsLong();
      for (TrackedReplica t : tracked.values()) {
        if (t.due(now)) {
          t.inFlight = new Scrape();
          start.add(t);
          scrapes.add(t.inFlight);
        }
        if (t.inFlight != null) {
          all.add(t.inFlight.done);
        }
      }
    }
    for (int i = 0; i < start.size(); i++) {
      startScrape(start.get(i), scrapes.get(i)); // a scrape abandoned meanwhile settles as a no-op
    }
    return all;
  }

  private void startScrape(TrackedReplica t, Scrape s) {
    if (s.settled.get()) {
      return; // removed or closed since it was claimed
    }
    Duration timeout = settings.scrapeTimeout();
    try {
      s.cancelOnSettle.add(scheduler.schedule(
          () -> settleFailure(t, s, Failure.TIMEOUT), timeout.toNanos(), TimeUnit.NANOSECONDS));
    } catch (RejectedExecutionException e) {
      settle(t, s, () -> {}); // closing: release the claim
      return;
    }
    CompletableFuture<HttpResponse<String>> metrics = EngineHttp.send(client,
        EngineHttp.get(EngineHttp.resolve(t.endpoint, settings.metricsPath()), timeout),
        settings.maxResponseBytes());
    s.cancelOnSettle.add(metrics);
    CompletableFuture<Optional<Boolean>> sleeping;
    if (settings.probeSleepState() && t.probeSleep()) {
      CompletableFuture<HttpResponse<String>> probe = EngineHttp.send(client,
          EngineHttp.get(EngineHttp.resolve(t.endpoint, "/is_sleeping"), timeout),
          settings.maxResponseBytes());
      s.cancelOnSettle.add(probe);
      sleeping = probe.handle((r, e) -> sleepAnswer(t, r));
    } else {
      sleeping = CompletableFuture.completedFuture(Optional.empty());
    }
    metrics.whenComplete((response, error) -> {
      if (error != null) {
        settleFailure(t, s, EngineHttp.classify(error));
      } else if (response.statusCode() != 200) {
        settleFailure(t, s, Failure.BAD_STATUS);
      } else {
        sleeping.whenComplete((sl, e) -> settleBody(t, s, response.body(),
            sl == null ? Optional.empty() : sl));
      }
    });
  }

  private Optional<Boolean> sleepAnswer(TrackedReplica t, @Nullable HttpResponse<String> r) {
    if (r == null) {
      return Optional.empty();
    }
    if (r.statusCode() == 404) {
      synchronized (lock) {
        t.sleepProbeUnsupported();
      }
      return Optional.empty();
    }
    return r.statusCode() == 200 ? EngineHttp.isSleeping(r.body()) : Optional.empty();
  }

  private void settleBody(TrackedReplica t, Scrape s, String body, Optional<Boolean> sleeping) {
    if (s.settled.get()) {
      return;
    }
    EngineMetrics metrics = EngineMetrics.parse(body);
    if (metrics.models().isEmpty() && metrics.engine() == Engine.UNKNOWN) {
      settleFailure(t, s, Failure.BAD_BODY);
      return;
    }
    settle(t, s, () -> t.scraped(metrics, sleeping, settings.ticker().getAsLong(),
        settings.clock().instant()));
  }

  private void settleFailure(TrackedReplica t, Scrape s, Failure failure) {
    settle(t, s, () -> t.scrapeFailed(failure, settings.ticker().getAsLong()));
  }

  private void settle(TrackedReplica t, Scrape s, Runnable update) {
    if (!s.settled.compareAndSet(false, true)) {
      return; // the answer, the watchdog or close got there first
    }
    s.cancelAll();
    List<Replica> firstList = null;
    List<Replica> before = snapshot;
    List<Replica> after = before;
    synchronized (lock) {
      if (t.inFlight == s) {
        t.inFlight = null;
      }
      if (!closed.get() && tracked.get(t.endpoint.id()) == t) {
        update.run();
        firstList = publish();
        after = snapshot;
      }
    }
    completeFirst(firstList);
    if (after != before && !snapshotListeners.isEmpty()) {
      published(after); // outside the lock, on the scrape's thread
    }
    s.done.complete(null);
  }

  private static void abandon(Scrape s) {
    if (s.settled.compareAndSet(false, true)) {
      s.cancelAll();
      s.done.complete(null);
    }
  }

  /** Publishes a new snapshot if a replica changed; returns it if it is the first scraped one. */
  private @Nullable List<Replica> publish() {
    List<Replica> current = snapshot;
    List<Replica> next = new ArrayList<>(tracked.size());
    boolean changed = current.size() != tracked.size();
    boolean scraped = false;
    int i = 0;
    for (TrackedReplica t : tracked.values()) {
      Replica r = t.replica();
      next.add(r);
      changed |= !changed && !current.get(i).equals(r);
      scraped |= t.everScraped();
      i++;
    }
    if (changed) {
      snapshot = List.copyOf(next);
    }
    return scraped && !first.isDone() ? snapshot : null;
  }

  private void completeFirst(@Nullable List<Replica> list) {
    if (list != null) {
      first.complete(list); // outside the lock: dependents run here
    }
  }

}
