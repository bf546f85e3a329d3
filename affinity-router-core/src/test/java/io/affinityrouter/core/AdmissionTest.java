package io.affinityrouter.core;

import static io.affinityrouter.core.Prompts.anonymous;
import static io.affinityrouter.core.Prompts.concat;
import static io.affinityrouter.core.Prompts.replicas;
import static io.affinityrouter.core.Prompts.session;
import static io.affinityrouter.core.Prompts.tokens;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.spi.BindingKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** Holding new work past saturation: release by events, deadlines, bounds, cancellation, FIFO. */
class AdmissionTest {
  private final TestClock clock = new TestClock();
  private final ManualScheduler scheduler = new ManualScheduler(clock);

  private AffinityRouter.Builder builder() {
    return AffinityRouter.builder().clock(clock).random(new SplittableRandom(1))
        .holdScheduler(scheduler)
        .holdQueue(10_000, 64L << 20, Duration.ofSeconds(5));
  }

  private static CompletableFuture<RoutingDecision> async(Router router, RoutingRequest request,
      List<Replica> fleet) {
    return router.selectAsync(request, fleet).toCompletableFuture();
  }

  private static RoutingRequest tenant(String tenant, int[] prompt) {
    return RoutingRequest.builder().tenant(tenant).promptTokens(prompt).expectedOutputTokens(100)
        .build();
  }

  @Test
  void anInterruptedSelectLeavesTheQueueWithTheRefusalAndKeepsItsInterrupt() throws Exception {
    Router router = builder().maxInFlightRequests(1).build(); // the clock never reaches a deadline
    List<Replica> fleet = replicas(1);
    RoutingDecision first = router.select(anonymous(tokens(1, 64)), fleet);
    AtomicReference<RoutingDecision> got = new AtomicReference<>();
    AtomicBoolean interrupted = new AtomicBoolean();
    Thread caller = new Thread(() -> {
      got.set(router.select(anonymous(tokens(2, 64)), fleet));
      interrupted.set(Thread.currentThread().isInterrupted());
    });
    caller.setDaemon(true); // a select that ignored the interrupt would outlive the test
    caller.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (router.heldRequests() == 0 && System.nanoTime() < deadline) {
      Thread.sleep(1);
    }
    assertThat(router.heldRequests()).isEqualTo(1);
    caller.interrupt();
    caller.join(60_000);

    assertThat(caller.isAlive()).as("select returned").isFalse();
    assertThat(got.get().isRouted()).isFalse();
    assertThat(got.get().reason()).isEqualTo(RoutingReason.ALL_AT_LIMIT);
    assertThat(interrupted).as("interrupt status kept").isTrue();
    assertThat(router.heldRequests()).isZero();
    first.lease().close();
    RoutingDecision next = router.select(anonymous(tokens(3, 64)), fleet);
    assertThat(next.isRouted()).as("nothing admitted behind the caller's back").isTrue();
    next.lease().close();
  }

  @Test
  void aRequestThatFindsEveryReplicaAtItsLimitIsHeldUntilALeaseCloses() {
    Router router = builder().maxInFlightRequests(1).build();
    List<Replica> fleet = replicas(2);
    RoutingDecision a = router.select(anonymous(tokens(1, 64)), fleet);
    RoutingDecision b = router.select(anonymous(tokens(2, 64)), fleet);
    CompletableFuture<RoutingDecision> held = async(router, anonymous(tokens(3, 64)), fleet);

    assertThat(held).isNotDone();
    assertThat(router.heldRequests()).isEqualTo(1);
    b.lease().close();

    assertThat(held).isDone();
    assertThat(held.join().reason()).isEqualTo(RoutingReason.BEST_SCORE);
    assertThat(held.join().replica().id()).isEqualTo(b.replica().id());
    assertThat(router.heldRequests()).isZero();
    a.lease().close();
    held.join().lease().close();
  }

  @Test
  void heldRequestsOfOneTenantAreAdmittedInArrivalOrder() {
    Router router = builder().maxInFlightRequests(1).build();
    List<Replica> fleet = replicas(1);
    RoutingDecision first = router.select(anonymous(tokens(1, 64)), fleet);
    List<CompletableFuture<RoutingDecision>> held = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      held.add(async(router, tenant("t", tokens(10 + i, 64)), fleet));
    }
    first.lease().close();
    for (int i = 0; i < 5; i++) {
      assertThat(held.get(i)).isDone();
      for (int j = i + 1; j < 5; j++) {
        assertThat(held.get(j)).isNotDone();
      }
      held.get(i).join().lease().close();
    }
    assertThat(router.heldRequests()).isZero();
  }

  private static RoutingRequest resent(int retries, int[] prompt) {
    return RoutingRequest.builder().tenant("t").promptTokens(prompt).expectedOutputTokens(100)
        .retries(retries).build();
  }

  @Test
  void aTenantsFirstSendsAreAdmittedAheadOfItsResendsEachInArrivalOrder() {
    Router router = builder().maxInFlightRequests(1).build();
    List<Replica> fleet = replicas(1);
    RoutingDecision busy = router.select(anonymous(tokens(1, 64)), fleet);
    List<CompletableFuture<RoutingDecision>> held = new ArrayList<>();
    held.add(async(router, resent(1, tokens(10, 64)), fleet)); // 0: sent once before
    held.add(async(router, tenant("t", tokens(11, 64)), fleet)); // 1: a first send
    held.add(async(router, resent(2, tokens(12, 64)), fleet)); // 2: sent twice before
    held.add(async(router, tenant("t", tokens(13, 64)), fleet)); // 3: a first send
    busy.lease().close();
    int[] order = {1, 3, 0, 2};
    for (int k = 0; k < order.length; k++) {
      for (int j = 0; j < order.length; j++) {
        assertThat(held.get(order[j]).isDone()).as("request " + order[j] + " at step " + k)
            .isEqualTo(j <= k);
      }
      held.get(order[k]).join().lease().close();
    }
    assertThat(router.heldRequests()).isZero();
  }

  @Test
  void aReturningTurnsResendKeepsItsPlaceAheadOfLaterFirstSends() {
    Router router = builder().maxInFlightRequests(1).build();
    List<Replica> fleet = replicas(1);
    int[] context = tokens(1, 256);
    RoutingDecision turn1 = router.select(session("s", context), fleet);
    turn1.lease().close();
    RoutingDecision busy = router.select(anonymous(tokens(2, 64)), fleet);
    RoutingRequest turn2 = RoutingRequest.builder().sessionId("s")
        .promptTokens(concat(context, tokens(3, 64))).expectedOutputTokens(100).retries(1).build();
    CompletableFuture<RoutingDecision> returning = async(router, turn2, fleet);
    CompletableFuture<RoutingDecision> later = async(router, anonymous(tokens(4, 64)), fleet);
    assertThat(router.heldRequests()).isEqualTo(2);

    busy.lease().close();
    assertThat(returning).as("its session's context waits on its replica").isDone();
    assertThat(returning.join().reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
    assertThat(later).isNotDone();
    returning.join().lease().close();
    assertThat(later).isDone();
    later.join().lease().close();
  }

  @Test
  void aResendBehindFirstSendsStillExpiresAtItsOwnDeadline() {
    Router router = builder().maxInFlightRequests(1)
        .holdQueue(100, 1 << 20, Duration.ofSeconds(2)).build();
    List<Replica> fleet = replicas(1);
    RoutingDecision busy = router.select(anonymous(tokens(1, 64)), fleet);
    CompletableFuture<RoutingDecision> resend = async(router, resent(1, tokens(2, 64)), fleet);
    clock.advance(Duration.ofMillis(500));
    CompletableFuture<RoutingDecision> first = async(router, tenant("t", tokens(3, 64)), fleet);

    clock.advance(Duration.ofMillis(1_500));
    scheduler.runDue();
    assertThat(resend).isDone();
    assertThat(resend.join().reason()).isEqualTo(RoutingReason.ALL_AT_LIMIT);
    assertThat(first).isNotDone();
    assertThat(router.heldRequests()).isEqualTo(1);
    clock.advance(Duration.ofMillis(500));
    scheduler.runDue();
    assertThat(first).isDone();
    assertThat(first.join().isRouted()).isFalse();
    assertThat(router.heldRequests()).isZero();
    busy.lease().close();
  }

  @Test
  void aHeldRequestIsRefusedAtItsDeadlineWithRetryAfter() {
    Router router = builder().maxInFlightRequests(1)
        .holdQueue(100, 1 << 20, Duration.ofSeconds(2))
        .retryAfter(Duration.ofSeconds(3), Duration.ofSeconds(5)).build();
    List<Replica> fleet = replicas(1);
    RoutingDecision busy = router.select(anonymous(tokens(1, 64)), fleet);
    CompletableFuture<RoutingDecision> held = async(router, anonymous(tokens(2, 64)), fleet);

    clock.advance(Duration.ofMillis(1_999));
    scheduler.runDue();
    assertThat(held).isNotDone();
    clock.advance(Duration.ofMillis(1));
    scheduler.runDue();

    assertThat(held).isDone();
    assertThat(held.join().reason()).isEqualTo(RoutingReason.ALL_AT_LIMIT);
    assertThat(held.join().retryAfter()).isEqualTo(Duration.ofSeconds(3));
    assertThat(router.heldRequests()).isZero();
    assertThat(scheduler.pending()).isZero();
    busy.lease().close();
  }

  @Test
  void aFullQueueRefusesAtOnceAndNeverHoldsMoreThanItsBounds() {
    Router byCount = builder().maxInFlightRequests(1)
        .holdQueue(3, 1 << 20, Duration.ofSeconds(5)).build();
    List<Replica> fleet = replicas(1);
    byCount.select(anonymous(tokens(1, 64)), fleet);
    List<CompletableFuture<RoutingDecision>> held = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      held.add(async(byCount, anonymous(tokens(10 + i, 64)), fleet));
    }
    assertThat(held.subList(0, 3)).allSatisfy(f -> assertThat(f).isNotDone());
    assertThat(held.get(3)).isDone();
    assertThat(held.get(3).join().reason()).isEqualTo(RoutingReason.ALL_AT_LIMIT);
    assertThat(byCount.heldRequests()).isEqualTo(3);

    // 64 tokens are 4 blocks of 16: 256 + 32 bytes each; 1,000 bytes hold three.
    Router byBytes = builder().maxInFlightRequests(1)
        .holdQueue(1_000_000, 1_000, Duration.ofSeconds(5)).build();
    byBytes.select(anonymous(tokens(1, 64)), fleet);
    int refused = 0;
    for (int i = 0; i < 10_000; i++) {
      CompletableFuture<RoutingDecision> f = async(byBytes, anonymous(tokens(100 + i, 64)), fleet);
      if (f.isDone()) {
        assertThat(f.join().reason()).isEqualTo(RoutingReason.ALL_AT_LIMIT);
        refused++;
      }
      assertThat(byBytes.heldRequests()).isLessThanOrEqualTo(3);
    }
    assertThat(refused).isEqualTo(10_000 - 3);
  }

  @Test
  void aCancelledRequestLeavesTheQueueAndTakesNoSlot() {
    Router router = builder().maxInFlightRequests(1).build();
    List<Replica> fleet = replicas(1);
    RoutingDecision busy = router.select(anonymous(tokens(1, 64)), fleet);
    CompletableFuture<RoutingDecision> gone = async(router, anonymous(tokens(2, 64)), fleet);
    CompletableFuture<RoutingDecision> next = async(router, anonymous(tokens(3, 64)), fleet);

    assertThat(gone.cancel(false)).isTrue();
    assertThat(router.heldRequests()).isEqualTo(1);
    busy.lease().close();

    assertThat(next).isDone();
    assertThat(next.join().isRouted()).isTrue();
    next.join().lease().close();
    // Nothing was left holding the replica's only slot.
    RoutingDecision free = router.select(anonymous(tokens(4, 64)), fleet);
    assertThat(free.isRouted()).isTrue();
  }

  @Test
  void selectWaitsOnTheCallingThreadUntilAdmitted() throws Exception {
    Router router = builder().maxInFlightRequests(1).build();
    List<Replica> fleet = replicas(1);
    RoutingDecision busy = router.select(anonymous(tokens(1, 64)), fleet);
    CompletableFuture<RoutingDecision> blocked =
        CompletableFuture.supplyAsync(() -> router.select(anonymous(tokens(2, 64)), fleet));
    while (router.heldRequests() == 0) {
      Thread.onSpinWait();
    }
    assertThat(blocked).isNotDone();
    busy.lease().close();

    RoutingDecision d = blocked.get(30, TimeUnit.SECONDS);
    assertThat(d.isRouted()).isTrue();
  }

  @Test
  void aReturningTurnWaitsForItsReplicaAndIsNeverMovedToAFreeOne() {
    Router router = builder().maxInFlightRequests(1).build();
    List<Replica> fleet = replicas(2);
    int[] context = tokens(1, 256);
    RoutingDecision first = router.select(session("s", context), fleet);
    Replica bound = first.replica();
    first.lease().close();
    RoutingDecision occupant = router.select(anonymous(tokens(2, 64)), List.of(bound));

    CompletableFuture<RoutingDecision> turn = async(router, session("s", context), fleet);

    assertThat(turn).isNotDone(); // the other replica is free: it waits anyway
    occupant.lease().close();
    assertThat(turn).isDone();
    assertThat(turn.join().reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
    assertThat(turn.join().replica().id()).isEqualTo(bound.id());
    assertThat(turn.join().repinCause()).isEmpty();
  }

  @Test
  void withoutHoldingAReturningTurnAtItsLimitIsRefusedNotMoved() {
    Router router = builder().maxInFlightRequests(1).noHoldQueue().build();
    List<Replica> fleet = replicas(2);
    int[] context = tokens(1, 256);
    RoutingDecision first = router.select(session("s", context), fleet);
    first.lease().close();
    router.select(anonymous(tokens(2, 64)), List.of(first.replica()));

    RoutingDecision turn = router.select(session("s", context), fleet);

    assertThat(turn.reason()).isEqualTo(RoutingReason.ALL_AT_LIMIT);
    RoutingDecision after = router.select(session("s", context), List.of(fleet.get(0),
        fleet.get(1)));
    assertThat(after.isRouted()).isFalse();
  }

  @Test
  void aTurnAnotherGatewayRoutedLastIsNotHeldAsNewWork() {
    InMemoryBindingStore store = InMemoryBindingStore.builder().clock(clock).build();
    Router first = builder().bindingStore(store).build();
    Router second = builder().bindingStore(store).build();
    List<Replica> fleet = replicas(2);
    int[] context = tokens(1, 512);
    RoutingDecision earlier = first.select(session("s", context), fleet);
    earlier.lease().close();
    // Seconds of uncached prefill queued on both replicas, as the second gateway sees them.
    List<RoutingDecision> load = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      load.add(second.select(anonymous(tokens(100 + i, 120_000)), fleet));
    }

    CompletableFuture<RoutingDecision> next =
        async(second, session("s", Prompts.concat(context, tokens(5, 64))), fleet);
    CompletableFuture<RoutingDecision> newSession =
        async(second, session("new", tokens(4, 64)), fleet);

    assertThat(next).as("a returning turn that went through the other gateway").isDone();
    assertThat(next.join().reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
    assertThat(next.join().replica().id()).isEqualTo(earlier.replica().id());
    assertThat(newSession).as("a new session").isNotDone();
    assertThat(store.get(new BindingKey("", "", "new")).toCompletableFuture().join())
        .as("a held session is not bound").isEmpty();
    load.forEach(d -> d.lease().markFirstToken());
    assertThat(newSession).isCompletedWithValueMatching(d -> d.reason()
        == RoutingReason.SESSION_CLAIMED);
    first.close();
    second.close();
  }

  @Test
  void theHoldThresholdSetsHowMuchQueuedWorkNewWorkMayFind() {
    for (long seconds : new long[] {3, 60}) {
      Router router = builder().holdThreshold(Duration.ofSeconds(seconds)).build();
      List<Replica> fleet = replicas(1);
      // About 15 s of uncached prefill queued on the only replica (the default profile).
      RoutingDecision load = router.select(anonymous(tokens(100, 120_000)), fleet);
      assertThat(load.isRouted()).isTrue();

      CompletableFuture<RoutingDecision> fresh = async(router, anonymous(tokens(3, 64)), fleet);

      assertThat(fresh.isDone()).as("admitted under a %d s threshold", seconds)
          .isEqualTo(seconds == 60);
      load.lease().markFirstToken();
      assertThat(fresh).isCompletedWithValueMatching(RoutingDecision::isRouted);
      router.close();
    }
  }

  @Test
  void newWorkIsHeldWhenEvenTheCheapestReplicaHasSecondsQueuedButAKnownSessionGoesThrough() {
    Router router = builder().build();
    List<Replica> fleet = replicas(2);
    int[] context = tokens(1, 512);
    RoutingDecision known = router.select(session("known", context), fleet);
    known.lease().close();
    // A long uncached prompt on each replica queues seconds of prefill on both.
    List<RoutingDecision> load = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      load.add(router.select(anonymous(tokens(100 + i, 120_000)), fleet));
    }
    assertThat(load).allSatisfy(d -> assertThat(d.isRouted()).isTrue());

    CompletableFuture<RoutingDecision> fresh = async(router, anonymous(tokens(3, 64)), fleet);
    CompletableFuture<RoutingDecision> newSession =
        async(router, session("new", tokens(4, 64)), fleet);
    CompletableFuture<RoutingDecision> returning =
        async(router, session("known", Prompts.concat(context, tokens(5, 64))), fleet);

    assertThat(fresh).isNotDone();
    assertThat(newSession).isNotDone();
    assertThat(returning).isDone();
    assertThat(returning.join().replica().id()).isEqualTo(known.replica().id());
    assertThat(router.heldRequests()).isEqualTo(2);

    load.forEach(d -> d.lease().markFirstToken());
    assertThat(fresh).isDone();
    assertThat(fresh.join().isRouted()).isTrue();
    assertThat(newSession).isDone();
    assertThat(newSession.join().reason()).isEqualTo(RoutingReason.SESSION_CLAIMED);
  }

  @Test
  void newWorkWaitsWhereTheCacheTurnsOverFasterThanSessionsComeBack() {
    assertThat(newSessionHeld(1_000_000, true, 0)).as("a thrashing replica").isTrue();
    assertThat(newSessionHeld(0, true, 0)).as("contexts that outlive the returns").isFalse();
    assertThat(newSessionHeld(1_000_000, false, 0))
        .as("a thrashing replica, but turns that do not extend their session's last prompt")
        .isFalse();
    // At 10,000 tokens/s, this router's 24,000 tokens in flight leave contexts 17 s: past the
    // returns. Another gateway's 21 requests running there leave them under one.
    assertThat(newSessionHeld(100_000, true, 0)).as("this router's requests alone").isFalse();
    assertThat(newSessionHeld(100_000, true, 21)).as("with another gateway's").isTrue();
  }

  /**
   * Whether a new session is held on a replica whose engine writes {@code writtenPerTurn} tokens
   * every 10 s, where sessions come back once, 10 s later, with a prompt three times as long that
   * is {@code extending} their first (or shares only its first quarter, as a system prompt), and
   * that runs {@code runningElsewhere} requests another gateway sent beside this router's.
   */
  private boolean newSessionHeld(long writtenPerTurn, boolean extending, int runningElsewhere) {
    Router router = builder().build();
    // 300 returns teach the router how long sessions take and what they keep. The engine writes
    // 100,000 tokens/s into 200,000 of KV (a context lives 2 s), or nothing.
    List<Replica> fleet = List.of();
    int sessions = 300;
    for (int i = 0; i <= sessions; i++) {
      fleet = List.of(Replica.builder("r0").load(ReplicaLoad.builder().kvCapacityTokens(200_000)
          .kvWrittenTokens(1 + i * writtenPerTurn)
          .runningRequests(i == sessions ? 3 + runningElsewhere : 0).build()).build());
      if (i == sessions) {
        break;
      }
      router.select(session("s" + i, tokens(i, 64)), fleet).lease().close();
      if (i > 0) {
        router.select(session("s" + (i - 1), secondPrompt(i - 1, extending)), fleet).lease()
            .close();
      }
      if (i < 3) {
        router.select(session("load-" + i, tokens(100 + i, 64)), fleet).lease().close();
      }
      clock.advance(Duration.ofSeconds(10));
    }
    // Their next turns queue a second of prefill: under the 3 s that hold any new work.
    // Returning turns, so never held themselves.
    for (int i = 0; i < 3; i++) {
      assertThat(async(router, session("load-" + i, tokens(100 + i, 8_000)), fleet))
          .isCompletedWithValueMatching(RoutingDecision::isRouted);
    }
    CompletableFuture<RoutingDecision> newSession =
        async(router, session("new", tokens(7_000, 64)), fleet);
    CompletableFuture<RoutingDecision> returning = async(router,
        session("s" + (sessions - 1), secondPrompt(sessions - 1, extending)), fleet);

    assertThat(returning).as("a returning turn").isDone();
    boolean held = !newSession.isDone();
    assertThat(router.heldRequests()).isEqualTo(held ? 1 : 0);
    if (!held) {
      assertThat(newSession.join().reason()).isEqualTo(RoutingReason.SESSION_CLAIMED);
    }
    router.close();
    return held;
  }

  /** Session {@code i}'s second prompt: its first and 128 tokens more, or a shared block and more. */
  private static int[] secondPrompt(int i, boolean extending) {
    return extending ? tokens(i, 192) : Prompts.concat(tokens(i, 16), tokens(1_000 + i, 176));
  }

  @Test
  void aFreedSlotGoesToTheFirstHeldRequestNotToALaterArrival() {
    Router router = builder().maxInFlightRequests(1).build();
    List<Replica> fleet = replicas(2);
    RoutingDecision a = router.select(anonymous(tokens(1, 64)), fleet);
    RoutingDecision b = router.select(anonymous(tokens(2, 64)), fleet);
    CompletableFuture<RoutingDecision> second = async(router, anonymous(tokens(4, 64)), fleet);
    CompletableFuture<RoutingDecision> third = async(router, anonymous(tokens(5, 64)), fleet);
    assertThat(second).isNotDone();
    assertThat(third).isNotDone();
    b.lease().close();
    // The slot is taken as it frees, by the first held, in order ...
    assertThat(second).isDone();
    assertThat(third).isNotDone();
    // ... so an arrival after it finds no room and waits behind the third.
    CompletableFuture<RoutingDecision> fourth = async(router, anonymous(tokens(6, 64)), fleet);
    assertThat(fourth).isNotDone();
    a.lease().close();
    assertThat(third).isDone();
    assertThat(fourth).isNotDone();
  }

  @Test
  void newWorkWithRoomIsNotHeldBehindWorkWaitingForABusyReplica() {
    Router router = builder().maxPromptBlocks(16_384).build();
    List<Replica> fleet = replicas(2);
    // A 250,000-token family: over 30 s of prefill (attention included) where it is not cached.
    int[] family = tokens(1, 250_000);
    RoutingDecision first = router.select(anonymous(family), fleet);
    first.lease().close();
    String holder = first.replica().id();
    // A new tail queues about 10 s of prefill on the holder, over the 3 s that hold new work.
    RoutingDecision busy =
        router.select(anonymous(Prompts.concat(family, tokens(2, 40_000))), fleet);
    assertThat(busy.replica().id()).isEqualTo(holder);
    CompletableFuture<RoutingDecision> family2 =
        async(router, anonymous(Prompts.concat(family, tokens(3, 64))), fleet);
    assertThat(family2).as("waits for the holder").isNotDone();

    // The other replica is idle: a prompt that is cheapest there does not wait behind family2.
    CompletableFuture<RoutingDecision> other = async(router, anonymous(tokens(4, 64)), fleet);
    assertThat(other).isDone();
    assertThat(other.join().replica().id()).isNotEqualTo(holder);
    assertThat(router.heldRequests()).isEqualTo(1);

    busy.lease().markFirstToken();
    assertThat(family2).isDone();
    assertThat(family2.join().replica().id()).isEqualTo(holder);
  }

  @Test
  void closingTheRouterRefusesWhatItHolds() {
    Router router = builder().maxInFlightRequests(1).build();
    List<Replica> fleet = replicas(1);
    router.select(anonymous(tokens(1, 64)), fleet);
    CompletableFuture<RoutingDecision> held = async(router, anonymous(tokens(2, 64)), fleet);
    router.close();
    assertThat(held).isDone();
    assertThat(held.join().reason()).isEqualTo(RoutingReason.ALL_AT_LIMIT);
    assertThat(router.heldRequests()).isZero();
  }

  @Test
  void refreshOffersHeldRequestsAgainstNewLoads() {
    Router router = builder().build();
    List<Replica> waiting = List.of(waiting("r0", 4_000), waiting("r1", 4_000));
    CompletableFuture<RoutingDecision> held = async(router, anonymous(tokens(1, 64)), waiting);
    assertThat(held).isNotDone();

    router.refresh(List.of(waiting("r0", 0), waiting("r1", 0)));

    assertThat(held).isDone();
    assertThat(held.join().isRouted()).isTrue();
  }

  private static Replica waiting(String id, int requests) {
    return Replica.builder(id).load(ReplicaLoad.builder().waitingRequests(requests).build())
        .build();
  }

  @Test
  void badBoundsAreRefusedAtTheBuilder() {
    assertThatThrownBy(() -> AffinityRouter.builder().holdQueue(0, 1, Duration.ofSeconds(1)))
        .hasMessage("maxHeldRequests: 0 (expected: > 0)");
    assertThatThrownBy(() -> AffinityRouter.builder().holdQueue(1, 0, Duration.ofSeconds(1)))
        .hasMessage("maxHeldBytes: 0 (expected: > 0)");
    assertThatThrownBy(() -> AffinityRouter.builder().holdQueue(1, 1, Duration.ZERO))
        .hasMessageStartingWith("maxHold: ");
    assertThatThrownBy(() -> AffinityRouter.builder().holdThreshold(Duration.ofMillis(-1)))
        .hasMessageStartingWith("holdThreshold: ");
  }
}
