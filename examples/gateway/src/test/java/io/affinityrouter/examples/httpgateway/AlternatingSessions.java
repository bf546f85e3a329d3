package io.affinityrouter.examples.httpgateway;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Runs multi-turn sessions concurrently (one thread each), turn {@code t} of every session sent to
 * gateway {@code t % gateways}, and optionally runs a disruption (kill a backend, stop Redis) on
 * another thread once a given number of turns have completed, while other turns are in flight.
 * Records every turn.
 */
final class AlternatingSessions {
  /** One turn as the client saw it. */
  record Turn(String session, int turn, int gateway, int status, String replica, String reason,
      long startNanos, long endNanos) {
    boolean is5xx() {
      return status >= 500;
    }
  }

  private final ChatClient client = new ChatClient();
  private final List<Gateway> gateways;
  private final int sessions;
  private final int turns;
  private volatile long disruptionStart = Long.MAX_VALUE;
  private volatile long disruptionEnd = Long.MAX_VALUE;
  private final Map<String, List<Turn>> all = Collections.synchronizedMap(new LinkedHashMap<>());

  private final int concurrency;

  AlternatingSessions(List<Gateway> gateways, int sessions, int turns) {
    this(gateways, sessions, turns, sessions);
  }

  /** As the other constructor, with at most {@code concurrency} sessions running at once. */
  AlternatingSessions(List<Gateway> gateways, int sessions, int turns, int concurrency) {
    this.gateways = gateways;
    this.sessions = sessions;
    this.turns = turns;
    this.concurrency = concurrency;
  }

  /** When the disruption started and ended ({@code Long.MAX_VALUE} if it did not run). */
  long disruptionStart() {
    return disruptionStart;
  }

  long disruptionEnd() {
    return disruptionEnd;
  }

  /** The replica that served a session's first turn so far (null if none yet). */
  String firstReplica(String session) {
    List<Turn> turns = all.get(session);
    synchronized (turns) {
      return turns.isEmpty() ? null : turns.get(0).replica();
    }
  }

  /**
   * Runs every session to the end; {@code disruption} runs once {@code afterTurns} turns have
   * completed (null: none). Returns each session's turns, in order.
   */
  Map<String, List<Turn>> run(int afterTurns, Runnable disruption) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(concurrency + 1);
    AtomicInteger completed = new AtomicInteger();
    CompletableFuture<Void> disrupted = new CompletableFuture<>();
    List<CompletableFuture<?>> futures = new ArrayList<>();
    try {
      for (int s = 0; s < sessions; s++) {
        String id = "session-" + s;
        Conversation c = new Conversation(id, TestFleet.MODEL,
            Conversation.systemPrompt(s, 1500));
        List<Turn> list = Collections.synchronizedList(new ArrayList<>());
        all.put(id, list);
        futures.add(CompletableFuture.runAsync(() -> {
          for (int t = 1; t <= turns; t++) {
            int g = t % gateways.size();
            long start = System.nanoTime();
            ChatClient.Reply r;
            try {
              r = client.post(gateways.get(g).baseUrl(), "/v1/chat/completions", id,
                  c.next(6, false));
            } catch (Exception e) {
              throw new IllegalStateException(id + " turn " + t, e);
            }
            list.add(new Turn(id, t, g, r.status(), r.replica(), r.reason(), start,
                System.nanoTime()));
            if (r.status() == 200) {
              c.answeredFrom(r.body());
            } else {
              c.answered("(no answer)");
            }
            if (completed.incrementAndGet() == afterTurns && disruption != null) {
              pool.execute(() -> {
                disruptionStart = System.nanoTime();
                try {
                  disruption.run();
                  disruptionEnd = System.nanoTime();
                  disrupted.complete(null);
                } catch (RuntimeException e) {
                  disrupted.completeExceptionally(e);
                }
              });
            }
            pause();
          }
        }, pool));
      }
      CompletableFuture.allOf(futures.toArray(new CompletableFuture<?>[0]))
          .get(90, TimeUnit.SECONDS);
      if (disruption != null) {
        disrupted.get(30, TimeUnit.SECONDS);
      }
      return all;
    } finally {
      pool.shutdownNow();
    }
  }

  private static void pause() {
    try {
      Thread.sleep(5);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
