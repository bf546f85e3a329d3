package io.affinityrouter.core.engine;

import io.affinityrouter.Replica;
import io.affinityrouter.core.engine.EngineActionResult.Status;
import io.affinityrouter.internal.Checks;
import io.affinityrouter.spi.ReplicaEndpoint.Engine;
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
 * A {@link FleetView}'s sleep-mode actions (vLLM's sleep mode, SGLang's memory release): each
 * sent from the view's own thread (never the
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
    send(replicaId, Action.wake(tagList)).whenComplete((r, e) -> {
      wakes.remove(replicaId, mine);
      mine.complete(r);
    });
    return mine;
  }

  /** One action, sent as each engine takes it. */
  record Action(Kind kind, List<String> tags, int level, String mode) {
    enum Kind { WAKE, SLEEP, IS_SLEEPING }

    static Action wake(List<String> tags) {
      return new Action(Kind.WAKE, tags, 0, "");
    }

    static Action sleep(int level, String mode) {
      return new Action(Kind.SLEEP, List.of(), level, mode);
    }

    static Action isSleeping() {
      return new Action(Kind.IS_SLEEPING, List.of(), 0, "");
    }
  }

  CompletableFuture<EngineActionResult> send(String replicaId, Action action) {
    CompletableFuture<EngineActionResult> result = new CompletableFuture<>();
    inFlight.add(result);
    result.whenComplete((r, e) -> inFlight.remove(result));
    if (!submit.test(() -> start(result, replicaId, action))) {
      result.complete(EngineActionResult.of(Status.CLOSED, "closed"));
    }
    return result;
  }

  private void start(CompletableFuture<EngineActionResult> result, String replicaId,
      Action action) {
    TrackedReplica t = state.tracked(replicaId);
    if (t == null) {
      result.complete(EngineActionResult.of(Status.UNKNOWN_REPLICA, "no replica " + replicaId));
      return;
    }
    if (t.engine() == Engine.SGLANG) {
      startSglang(result, t, action);
      return;
    }
    String pathAndQuery;
    switch (action.kind()) {
      case WAKE:
        pathAndQuery = EngineHttp.wakeUpPath(action.tags());
        wakeRequestsSent.increment();
        break;
      case SLEEP:
        pathAndQuery = "/sleep?level=" + action.level() + "&mode=" + action.mode();
        break;
      default:
        pathAndQuery = "/is_sleeping";
    }
    URI uri = EngineHttp.resolve(t.endpoint, pathAndQuery);
    boolean post = action.kind() != Action.Kind.IS_SLEEPING;
    HttpRequest request = post ? EngineHttp.post(uri, timeout) : EngineHttp.get(uri, timeout);
    exchange(result, request, post, VLLM_404, null);
  }

  /**
   * SGLang's memory release and resume ({@code POST /release_memory_occupation},
   * {@code /resume_memory_occupation}, body {@code {"tags": [...]}}, none meaning all). Its
   * scheduler asserts that no request is running or queued when it releases, so a sleep is sent
   * only in {@code wait} mode and only when the last scrape showed the server idle; the models
   * show {@code SLEEPING} from the release until a resume, as SGLang reports no sleep state.
   */
  private void startSglang(CompletableFuture<EngineActionResult> result, TrackedReplica t,
      Action action) {
    switch (action.kind()) {
      case WAKE: {
        wakeRequestsSent.increment();
        HttpRequest request = EngineHttp.post(
            EngineHttp.resolve(t.endpoint, "/resume_memory_occupation"), timeout,
            EngineHttp.tagsBody(action.tags()));
        exchange(result, request, true, SGLANG_404, () -> state.memoryReleased(t, false));
        return;
      }
      case SLEEP: {
        if (!"wait".equals(action.mode())) {
          result.complete(EngineActionResult.of(Status.UNSUPPORTED, "SGLang releases memory only"
              + " when no request is in flight: sleep in wait mode once it is drained"));
          return;
        }
        Replica seen = t.replica();
        if (!t.everScraped() || seen.load().runningRequests() > 0
            || seen.load().waitingRequests() > 0) {
          result.complete(EngineActionResult.of(Status.FAILED, "busy: SGLang releases memory"
              + " only when idle, and its last scrape showed " + seen.load().runningRequests()
              + " running and " + seen.load().waitingRequests() + " waiting requests"
              + (t.everScraped() ? "" : " (never scraped)")));
          return;
        }
        HttpRequest request = EngineHttp.post(
            EngineHttp.resolve(t.endpoint, "/release_memory_occupation"), timeout,
            EngineHttp.tagsBody(List.of()));
        exchange(result, request, true, SGLANG_404, () -> state.memoryReleased(t, true));
        return;
      }
      default:
        result.complete(EngineActionResult.of(Status.UNSUPPORTED,
            "SGLang has no sleep-state endpoint"));
    }
  }

  private static final String VLLM_404 = "404: the server has no sleep-mode endpoints (vLLM"
      + " needs VLLM_SERVER_DEV_MODE=1 and --enable-sleep-mode)";
  private static final String SGLANG_404 = "404: the server has no memory release endpoints";

  private void exchange(CompletableFuture<EngineActionResult> result, HttpRequest request,
      boolean post, String unsupported, @Nullable Runnable onDone) {
    CompletableFuture<HttpResponse<String>> sent = EngineHttp.send(client, request,
        maxResponseBytes);
    result.whenComplete((r, e) -> sent.cancel(true));
    sent.whenComplete((response, error) -> {
      EngineActionResult outcome = outcome(response, error, post, unsupported);
      if (outcome.isDone() && onDone != null) {
        onDone.run();
      }
      result.complete(outcome);
    });
  }

  private static EngineActionResult outcome(@Nullable HttpResponse<String> response,
      @Nullable Throwable error, boolean post, String unsupported) {
    if (response == null) {
      return EngineActionResult.of(Status.FAILED,
          String.valueOf(EngineHttp.unwrap(Objects.requireNonNull(error))));
    }
    int status = response.statusCode();
    if (status == 404) {
      return EngineActionResult.of(Status.UNSUPPORTED, unsupported);
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
