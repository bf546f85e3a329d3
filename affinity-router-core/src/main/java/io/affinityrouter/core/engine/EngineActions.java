package io.affinityrouter.core.engine;

import io.affinityrouter.core.engine.EngineActionResult.Status;
import io.affinityrouter.core.metrics.EngineKind;
import io.affinityrouter.spi.Checks;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * A {@link FleetView}'s sleep-mode actions: each sent from the view's own thread (never the
 * caller's), answered as an {@link EngineActionResult}, completed {@code CLOSED} by
 * {@link #closeAll()}; wakes of one replica de-duplicated while one is in flight. Thread-safe.
 */
final class EngineActions {
  private final HttpClient client;
  private final Duration timeout;
  private final int maxResponseBytes;
  private final FleetState state;
  private final Predicate<Runnable> submit;
  private final Map<String, CompletableFuture<EngineActionResult>> wakes = new ConcurrentHashMap<>();
  private final Set<CompletableFuture<EngineActionResult>> inFlight = ConcurrentHashMap.newKeySet();
  private final LongAdder wakeRequestsSent = new LongAdder();

  EngineActions(HttpClient client, Duration timeout, int maxResponseBytes, FleetState state,
      Predicate<Runnable> submit) {
    this.client = client;
    this.timeout = timeout;
    this.maxResponseBytes = maxResponseBytes;
    this.state = state;
    this.submit = submit;
  }

  long wakeRequestsSent() {
    return wakeRequestsSent.sum();
  }

  CompletableFuture<EngineActionResult> wakeUp(String replicaId, Collection<String> tags) {
    List<String> tagList = List.copyOf(tags);
    tagList.forEach(t -> Checks.notBlank(t, "tag"));
    CompletableFuture<EngineActionResult> mine = new CompletableFuture<>();
    CompletableFuture<EngineActionResult> running = wakes.putIfAbsent(replicaId, mine);
    if (running != null) {
      return running;
    }
    send(replicaId, EngineHttp.wakeUpPath(tagList), true).whenComplete((r, e) -> {
      wakes.remove(replicaId, mine);
      mine.complete(r);
    });
    return mine;
  }

  CompletableFuture<EngineActionResult> send(String replicaId, String pathAndQuery, boolean post) {
    CompletableFuture<EngineActionResult> result = new CompletableFuture<>();
    inFlight.add(result);
    result.whenComplete((r, e) -> inFlight.remove(result));
    if (!submit.test(() -> start(result, replicaId, pathAndQuery, post))) {
      result.complete(EngineActionResult.of(Status.CLOSED, "closed"));
    }
    return result;
  }

  private void start(CompletableFuture<EngineActionResult> result, String replicaId,
      String pathAndQuery, boolean post) {
    TrackedReplica t = state.tracked(replicaId);
    if (t == null) {
      result.complete(EngineActionResult.of(Status.UNKNOWN_REPLICA, "no replica " + replicaId));
      return;
    }
    if (t.engineKind() == EngineKind.SGLANG) {
      result.complete(EngineActionResult.of(Status.UNSUPPORTED,
          "SGLang has no sleep-mode endpoints"));
      return;
    }
    URI uri = EngineHttp.resolve(t.endpoint, pathAndQuery);
    HttpRequest request = post ? EngineHttp.post(uri, timeout) : EngineHttp.get(uri, timeout);
    if (pathAndQuery.startsWith("/wake_up")) {
      wakeRequestsSent.increment();
    }
    CompletableFuture<HttpResponse<String>> sent = EngineHttp.send(client, request,
        maxResponseBytes);
    result.whenComplete((r, e) -> sent.cancel(true));
    sent.whenComplete((response, error) -> result.complete(outcome(response, error, post)));
  }

  private static EngineActionResult outcome(@Nullable HttpResponse<String> response,
      @Nullable Throwable error, boolean post) {
    if (response == null) {
      return EngineActionResult.of(Status.FAILED,
          String.valueOf(EngineHttp.unwrap(Objects.requireNonNull(error))));
    }
    int status = response.statusCode();
    if (status == 404) {
      return EngineActionResult.of(Status.UNSUPPORTED,
          "404: the server has no sleep-mode endpoints (vLLM needs VLLM_SERVER_DEV_MODE=1 and"
              + " --enable-sleep-mode)");
    }
    if (status / 100 != 2) {
      return EngineActionResult.rejected(status, "HTTP " + status);
    }
    return EngineActionResult.done(status,
        post ? Optional.empty() : EngineHttp.isSleeping(response.body()));
  }

  /** Completes every action in flight {@code CLOSED} (cancelling its request). */
  void closeAll() {
    for (CompletableFuture<EngineActionResult> a : List.copyOf(inFlight)) {
      a.complete(EngineActionResult.of(Status.CLOSED, "closed"));
    }
  }
}
