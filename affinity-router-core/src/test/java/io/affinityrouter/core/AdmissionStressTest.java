package io.affinityrouter.core;

import static io.affinityrouter.core.Prompts.tokens;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Every held request ends exactly once (admitted, refused at its deadline, or cancelled) while
 * leases close, callers cancel and deadlines pass on other threads at once; nothing is lost, no
 * slot leaks and none is freed twice. Real threads and the system clock; time is not the subject.
 */
class AdmissionStressTest {

  @Test
  void everyHeldRequestEndsExactlyOnceUnderConcurrentReleasesCancelsAndDeadlines()
      throws Exception {
    ScheduledExecutorService timers = Executors.newScheduledThreadPool(2);
    Router router = AffinityRouter.builder().maxInFlightRequests(2)
        .holdQueue(100_000, 64L << 20, Duration.ofMillis(20)).holdScheduler(timers).build();
    List<Replica> fleet = Prompts.replicas(2); // four slots in all
    int threads = 4;
    int perThread = 1_500;
    AtomicInteger routed = new AtomicInteger();
    AtomicInteger refused = new AtomicInteger();
    AtomicInteger cancelled = new AtomicInteger();
    AtomicInteger endings = new AtomicInteger();
    ConcurrentLinkedQueue<CompletableFuture<RoutingDecision>> all = new ConcurrentLinkedQueue<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> submitters = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      int id = t;
      Thread th = new Thread(() -> {
        SplittableRandom rnd = new SplittableRandom(id);
        await(start);
        for (int i = 0; i < perThread; i++) {
          RoutingRequest r = RoutingRequest.builder().tenant("t" + rnd.nextInt(5))
              .promptTokens(tokens(id * 1_000_000L + i, 16 + rnd.nextInt(64)))
              .expectedOutputTokens(10).build();
          CompletableFuture<RoutingDecision> f = router.selectAsync(r, fleet).toCompletableFuture();
          all.add(f);
          f.whenComplete((d, ex) -> {
            endings.incrementAndGet();
            if (f.isCancelled()) {
              cancelled.incrementAndGet();
            } else if (d.isRouted()) {
              routed.incrementAndGet();
              // The request runs a moment, then ends on a timer thread.
              timers.schedule(() -> d.lease().close(), ThreadLocalRandom.current().nextInt(2),
                  TimeUnit.MILLISECONDS);
            } else {
              assertThat(d.reason()).isEqualTo(RoutingReason.ALL_AT_LIMIT);
              refused.incrementAndGet();
            }
          });
          if (rnd.nextInt(5) == 0) {
            f.cancel(false); // the client went away
          }
        }
      });
      th.start();
      submitters.add(th);
    }
    start.countDown();
    for (Thread th : submitters) {
      th.join(TimeUnit.MINUTES.toMillis(2));
    }
    CompletableFuture.allOf(all.toArray(CompletableFuture[]::new))
        .exceptionally(ex -> null).get(2, TimeUnit.MINUTES);
    // Leases close on the timers a moment after their admission.
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
    while (router.heldRequests() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    timers.shutdown();
    assertThat(timers.awaitTermination(1, TimeUnit.MINUTES)).isTrue();

    int total = threads * perThread;
    assertThat(all).hasSize(total).allSatisfy(f -> assertThat(f).isDone());
    assertThat(endings.get()).isEqualTo(total);
    assertThat(routed.get() + refused.get() + cancelled.get()).isEqualTo(total);
    assertThat(routed.get()).isPositive();
    assertThat(router.heldRequests()).isZero();
    // Exactly the four slots are free again: four route at once, a fifth waits.
    List<RoutingDecision> four = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      four.add(router.select(Prompts.anonymous(tokens(-1 - i, 16)), fleet));
    }
    assertThat(four).allSatisfy(d -> assertThat(d.isRouted()).isTrue());
    CompletableFuture<RoutingDecision> fifth =
        router.selectAsync(Prompts.anonymous(tokens(-9, 16)), fleet).toCompletableFuture();
    assertThat(fifth).isNotDone();
    four.get(0).lease().close();
    assertThat(fifth.get(1, TimeUnit.MINUTES).isRouted()).isTrue();
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
