package io.affinityrouter.core.kvevents;

import static io.affinityrouter.core.kvevents.RecordingSink.cleared;
import static io.affinityrouter.core.kvevents.RecordingSink.stored;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The subscriber against an in-process JeroMQ publisher that speaks vLLM's protocol (PUB plus a
 * ROUTER replay socket, {@link TestPublisher}): gaps, replays, replays that cannot close the gap,
 * publisher restarts, data-parallel ranks, malformed messages, and close.
 */
class KvEventSubscriberTest {
  private static final Duration PATIENCE = Await.PATIENCE;

  private final RecordingSink sink = new RecordingSink();
  private final List<AutoCloseable> closeables = new ArrayList<>();
  private KvEventSubscriber current;
  private boolean currentReplays;
  private KvEventStats atConnect; // the counters when connect returned

  @AfterEach
  void closeAll() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
  }

  private <T extends AutoCloseable> T closing(T c) {
    closeables.add(c);
    return c;
  }

  private static int[] block(int n) {
    return IntStream.range(16 * n, 16 * n + 16).toArray();
  }

  /** Batch n: one 16-token block with engine hash n, chained to block n - 1. */
  private static byte[] batch(int n) {
    return Batches.arrays().stored(new long[] {n}, n == 1 ? null : (long) (n - 1), block(n), 16)
        .build();
  }

  private static String storedCall(int n) {
    return stored("r1", "m", n == 1 ? null : (long) (n - 1), new long[] {n}, block(n), 16);
  }

  private KvEventSubscriber subscribe(TestPublisher pub, boolean replay,
      KvEventSubscriber.Builder tweaks) {
    KvEventSubscriber s = tweaks.replicaId("r1").model("m").endpoint(pub.endpoint())
        .replayEndpoint(replay ? pub.replayEndpoint() : null)
        .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(200)).build();
    closing(s).start();
    current = s;
    currentReplays = replay;
    return s;
  }

  /** Publishes empty batches until one arrives (a SUB socket misses what precedes it). */
  private void connect(TestPublisher pub, KvEventSubscriber s) {
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (s.stats().batches() == 0) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("subscriber never received a batch: " + s.stats() + "; "
            + Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("kv-events-")
                    || t.getName().startsWith("test-publisher-"))
                .map(t -> t.getName() + " " + t.getState()).toList());
      }
      pub.publish(Batches.empty());
      long until = System.nanoTime() + 20_000_000;
      while (s.stats().batches() == 0 && System.nanoTime() - until < 0) {
        Thread.yield();
      }
    }
    assertThat(sink.calls()).isEmpty();
    if (currentReplays) {
      // the history replay may have applied warm-up batches whose live copies are still coming
      // (each then a duplicate): a marker after them, once applied, says they all were read
      pub.publish(Batches.arrays().removed(CONNECT_MARKER).build());
      awaitCalls(1);
      assertThat(sink.calls()).containsExactly(RecordingSink.removed("r1", CONNECT_MARKER));
      sink.reset();
    }
    atConnect = s.stats();
  }

  private static final long CONNECT_MARKER = 0xC0FFEEL;

  /** Duplicates counted since connect returned (the warm-up's are its own business). */
  private long duplicatesSinceConnect(KvEventSubscriber s) {
    return s.stats().duplicates() - atConnect.duplicates();
  }

  private void awaitCalls(int n) {
    try {
      Await.until(n + " sink calls", () -> sink.size() >= n);
    } catch (AssertionError e) {
      throw new AssertionError(e.getMessage() + "; have " + sink.calls() + ", " + current.stats(),
          e);
    }
  }

  @ParameterizedTest
  @EnumSource(TestPublisher.Framing.class)
  void aGapIsClosedByReplayInOrder(TestPublisher.Framing framing) {
    TestPublisher pub = closing(TestPublisher.start(framing));
    KvEventSubscriber s = subscribe(pub, true, KvEventSubscriber.builder(sink));
    connect(pub, s);
    pub.publish(batch(1));
    pub.lose(batch(2));
    pub.lose(batch(3));
    pub.publish(batch(4));
    pub.publish(batch(5));
    awaitCalls(5);
    assertThat(sink.calls()).containsExactly(storedCall(1), storedCall(2), storedCall(3),
        storedCall(4), storedCall(5));
    KvEventStats stats = s.stats();
    assertThat(stats.gaps()).isEqualTo(1);
    assertThat(stats.replays()).isEqualTo(1);
    assertThat(stats.replayFailures()).isZero();
    assertThat(stats.decodeErrors()).isZero();
  }

  @Test
  void aSubscriberThatStartsAfterThePublisherAsksForItsHistory() {
    TestPublisher pub = closing(TestPublisher.start());
    pub.forgetBefore(0);
    pub.lose(Batches.empty()); // numbers the engine used before the gateway started
    pub.publish(batch(1));
    pub.publish(batch(2));
    pub.forgetBefore(1); // the buffer starts after 0
    KvEventSubscriber s = subscribe(pub, true, KvEventSubscriber.builder(sink));
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (s.stats().batches() == 0 && System.nanoTime() - deadline < 0) {
      pub.publish(Batches.empty());
      java.util.concurrent.locks.LockSupport.parkNanos(20_000_000);
    }
    pub.publish(batch(3));
    awaitCalls(3);
    // 1 and 2 were sent before the subscriber connected: only the history has them
    assertThat(sink.calls()).containsExactly(storedCall(1), storedCall(2), storedCall(3));
    assertThat(s.stats().gaps()).isZero();
  }

  @Test
  void aGarbageSequenceNumberIsDroppedAndTheStreamGoesOn() {
    TestPublisher pub = closing(TestPublisher.start());
    // held for as long as a busy machine may take to send the next one: never taken as real
    KvEventSubscriber s =
        subscribe(pub, true, KvEventSubscriber.builder(sink).breakHold(PATIENCE));
    connect(pub, s);
    pub.publish(batch(1));
    pub.sendFrames(new byte[0], Subscription.toBytes(1_000_000_000_000L), batch(9));
    pub.publish(batch(2));
    pub.publish(batch(3));
    awaitCalls(3);
    assertThat(sink.calls()).containsExactly(storedCall(1), storedCall(2), storedCall(3));
    KvEventStats stats = s.stats();
    assertThat(stats.outOfSequence()).isEqualTo(1);
    assertThat(stats.gaps()).isZero();
    assertThat(duplicatesSinceConnect(s)).isZero();
    assertThat(stats.replayFailures()).isZero();
  }

  @Test
  void aGapThatReplayCannotCloseMarksNoNumberAsADuplicate() {
    TestPublisher pub = closing(TestPublisher.start());
    KvEventSubscriber s = subscribe(pub, false, KvEventSubscriber.builder(sink));
    connect(pub, s);
    pub.publish(batch(1));
    // a jump with no next message for longer than the hold: taken as a real gap
    pub.sendFrames(new byte[0], Subscription.toBytes(1_000_000_000_000L), batch(9));
    Await.until("the held jump taken as a gap", () -> s.stats().gaps() == 1);
    pub.publish(batch(2));
    pub.publish(batch(3));
    awaitCalls(6);
    // the stream's own numbers come back: a restart (the index dropped again), then in order
    assertThat(sink.calls()).containsExactly(storedCall(1), cleared("r1"),
        stored("r1", "m", 8L, new long[] {9}, block(9), 16), cleared("r1"), storedCall(2),
        storedCall(3));
    assertThat(duplicatesSinceConnect(s)).isZero();
  }

  @Test
  void replayRepliesOfEveryPublisherGenerationAreRead() {
    byte[] e = new byte[0];
    byte[] seven = Subscription.toBytes(7);
    byte[] end = Subscription.toBytes(Subscription.END_OF_REPLAY);
    byte[] topic = "kv@pod@m".getBytes(java.nio.charset.StandardCharsets.UTF_8);
    assertThat(Subscription.replayedSeq(List.of(e, topic, seven, batch(1)))).isEqualTo(7);
    assertThat(Subscription.replayedSeq(List.of(e, e, end, e))).isEqualTo(-1);
    assertThat(Subscription.replayedSeq(List.of(e, seven, batch(1)))).isEqualTo(7);
    assertThat(Subscription.replayedSeq(List.of(e, end, e))).isEqualTo(-1);
    assertThat(Subscription.replayedSeq(List.of(e, e))).isEqualTo(-1); // the first releases' end
    assertThat(Subscription.replayedSeq(List.of(e, topic, new byte[3], batch(1))))
        .isEqualTo(Subscription.MALFORMED);
    assertThat(Subscription.replayedSeq(List.of(e, topic, seven, batch(1), e)))
        .isEqualTo(Subscription.MALFORMED);
    assertThat(Subscription.replayedSeq(List.of(e, topic))).isEqualTo(Subscription.MALFORMED);
  }

  @Test
  void aReplayThatStartsAfterTheGapDropsTheReplicasIndex() {
    TestPublisher pub = closing(TestPublisher.start());
    KvEventSubscriber s = subscribe(pub, true, KvEventSubscriber.builder(sink));
    connect(pub, s);
    pub.publish(batch(1));
    long lost = pub.lose(batch(2));
    pub.forgetBefore(lost + 1); // the publisher's buffer no longer holds it
    pub.publish(batch(3));
    pub.publish(batch(4));
    awaitCalls(4);
    assertThat(sink.calls()).containsExactly(storedCall(1), cleared("r1"), storedCall(3),
        storedCall(4));
    assertThat(s.stats().replayFailures()).isEqualTo(1);
    assertThat(s.stats().replays()).isEqualTo(1);
  }

  @Test
  void withoutAReplayEndpointAGapDropsTheReplicasIndex() {
    TestPublisher pub = closing(TestPublisher.start());
    KvEventSubscriber s = subscribe(pub, false, KvEventSubscriber.builder(sink));
    connect(pub, s);
    pub.publish(batch(1));
    pub.lose(batch(2));
    pub.publish(batch(3));
    awaitCalls(3);
    assertThat(sink.calls()).containsExactly(storedCall(1), cleared("r1"), storedCall(3));
    assertThat(s.stats().gaps()).isEqualTo(1);
    assertThat(s.stats().replays()).isZero();
    assertThat(s.stats().replayFailures()).isEqualTo(1);
  }

  @Test
  void aConnectionWhoseHandshakeStallsIsDroppedAndDialledAgain() throws Exception {
    TestPublisher pub = closing(TestPublisher.start());
    StallingProxy proxy = closing(new StallingProxy(pub.port()));
    // a handshake timeout well inside the patience; JeroMQ's own, 30 s, is beyond it
    KvEventSubscriber s = closing(KvEventSubscriber.builder(sink).replicaId("r1").model("m")
        .endpoint(proxy.endpoint()).handshakeTimeout(Duration.ofMillis(300))
        .reconnectBackoff(Duration.ofMillis(20), Duration.ofMillis(200)).build());
    current = s;
    s.start();
    connect(pub, s);
    Await.until("the stalled connection dropped", proxy::stalledClosedByClient);
    assertThat(proxy.accepted()).isGreaterThanOrEqualTo(2);
    assertThat(s.stats().reconnects()).isPositive();
    pub.publish(batch(1));
    awaitCalls(1);
    assertThat(sink.calls()).containsExactly(storedCall(1));
  }

  @Test
  void aReplaySocketThatNeverAnswersTimesOutAndDropsTheIndex() {
    TestPublisher pub = closing(TestPublisher.start());
    KvEventSubscriber s = subscribe(pub, true,
        KvEventSubscriber.builder(sink).replayTimeout(Duration.ofMillis(300)));
    connect(pub, s);
    pub.muteReplays();
    pub.publish(batch(1));
    pub.lose(batch(2));
    pub.publish(batch(3));
    pub.publish(batch(4));
    awaitCalls(4);
    assertThat(sink.calls()).containsExactly(storedCall(1), cleared("r1"), storedCall(3),
        storedCall(4));
    assertThat(s.stats().replayFailures()).isEqualTo(1);
  }

  @Test
  void aRestartedPublisherIsReconnectedAndItsEmptyCacheClearsTheIndex() {
    TestPublisher first = TestPublisher.start();
    KvEventSubscriber s = subscribe(first, true, KvEventSubscriber.builder(sink));
    connect(first, s);
    first.publish(batch(1));
    first.publish(batch(2));
    awaitCalls(2);
    int port = first.port();
    int replayPort = first.replayPort();
    first.close();
    TestPublisher second = closing(new TestPublisher("", port, replayPort));
    // numbers start over at 0; whatever the SUB socket missed while reconnecting is replayed
    // Numbers start over: either the subscriber sees them go back, or, if the new publisher is
    // past the old numbers by the time it reconnects, the replay's first batch is not the last
    // one applied. Either way the index is dropped.
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (s.stats().restarts() + s.stats().replayFailures() == 0) {
      assertThat(System.nanoTime() - deadline).as("the restart noticed").isNegative();
      second.publish(Batches.empty()); // one at a time: a flood would overrun the SUB queue
      long until = System.nanoTime() + 50_000_000;
      while (s.stats().restarts() + s.stats().replayFailures() == 0
          && System.nanoTime() - until < 0) {
        Thread.yield();
      }
    }
    second.publish(batch(1));
    Await.until("the new publisher's block", () -> sink.calls().contains(storedCall(1))
        && sink.calls().lastIndexOf(storedCall(1)) > 1);
    List<String> calls = sink.calls();
    assertThat(calls.subList(0, 3)).containsExactly(storedCall(1), storedCall(2), cleared("r1"));
    assertThat(calls.get(calls.size() - 1)).isEqualTo(storedCall(1));
    assertThat(s.stats().reconnects()).isGreaterThanOrEqualTo(1);
    assertThat(s.stats().restarts() + s.stats().replayFailures()).isPositive();
  }

  @Test
  void malformedMessagesAreCountedAndSkipped() {
    TestPublisher pub = closing(TestPublisher.start());
    KvEventSubscriber s = subscribe(pub, true, KvEventSubscriber.builder(sink));
    connect(pub, s);
    pub.sendFrames(new byte[0], new byte[] {1, 2, 3, 4}, batch(9)); // a 4-byte sequence number
    pub.sendFrames(new byte[0], Subscription.toBytes(0)); // no payload
    pub.publish(new byte[] {(byte) 0x93, 0x01}); // a truncated batch: its events are lost
    pub.publish(batch(1));
    awaitCalls(2);
    assertThat(sink.calls()).containsExactly(cleared("r1"), storedCall(1));
    assertThat(s.stats().decodeErrors()).isEqualTo(3);
    assertThat(s.stats().gaps()).isZero();
  }

  @Test
  void eachDataParallelRankIsItsOwnSubscription() {
    TestPublisher rank0 = closing(TestPublisher.start());
    TestPublisher rank1 = null;
    for (int attempt = 0; rank1 == null; attempt++) {
      try {
        rank1 = closing(new TestPublisher("", rank0.port() + 1, rank0.replayPort() + 1));
      } catch (RuntimeException portTaken) {
        if (attempt > 20) {
          throw portTaken;
        }
        rank0.close();
        rank0 = closing(TestPublisher.start());
      }
    }
    KvEventSubscriber s = closing(KvEventSubscriber.builder(sink).replicaId("r1").model("m")
        .endpoint(rank0.endpoint()).replayEndpoint(rank0.replayEndpoint()).dataParallelSize(2)
        .build());
    s.start();
    current = s;
    TestPublisher r1 = rank1;
    TestPublisher r0 = rank0;
    // each rank's SUB socket connects on its own: warm up with removals the sink can tell apart
    BooleanSupplier both = () -> sink.calls().contains(RecordingSink.removed("r1", 1000))
        && sink.calls().contains(RecordingSink.removed("r1", 2000));
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (!both.getAsBoolean()) {
      assertThat(System.nanoTime() - deadline).as("both ranks connected").isNegative();
      r0.publish(Batches.arrays().removed(1000).build());
      r1.publish(Batches.arrays().removed(2000).build());
      long until = System.nanoTime() + 20_000_000;
      while (!both.getAsBoolean() && System.nanoTime() - until < 0) {
        Thread.yield();
      }
    }
    r0.publish(batch(1));
    r1.publish(batch(7));
    r1.lose(batch(8));
    r1.publish(batch(9));
    Await.until("four blocks", () -> storedOnly(sink.calls()).size() >= 4);
    List<String> stored = storedOnly(sink.calls());
    assertThat(stored).containsExactlyInAnyOrder(storedCall(1), storedCall(7), storedCall(8),
        storedCall(9));
    assertThat(stored.indexOf(storedCall(8))).isLessThan(stored.indexOf(storedCall(9)));
    assertThat(s.stats().replays()).isEqualTo(1);
    assertThat(s.stats().replayFailures()).isZero();
  }

  private static List<String> storedOnly(List<String> calls) {
    return calls.stream().filter(c -> c.startsWith("stored")).toList();
  }

  @Test
  void closeStopsTheThreadsAndIsIdempotent() throws InterruptedException {
    TestPublisher pub = closing(TestPublisher.start());
    KvEventSubscriber s = subscribe(pub, true, KvEventSubscriber.builder(sink));
    connect(pub, s);
    Thread worker = Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().equals("kv-events-r1-dp0")).findFirst().orElseThrow();
    assertThat(s.isRunning()).isTrue();
    s.close();
    assertThat(worker.isAlive()).isFalse();
    assertThat(s.isRunning()).isFalse();
    s.close();
    pub.publish(batch(1));
    assertThat(sink.calls()).isEmpty();
    assertThatThrownBy(s::start).isInstanceOf(IllegalStateException.class).hasMessage("closed");
  }

  @Test
  void settingsAreCheckedAtTheBoundary() {
    KvEventSubscriber.Builder b = KvEventSubscriber.builder(sink);
    assertThatThrownBy(() -> b.build()).hasMessage(
        "replicaId: not set (expected: the replica's id)");
    b.replicaId("r1");
    assertThatThrownBy(() -> b.build()).hasMessage("endpoint: not set (expected: tcp://host:port)");
    assertThatThrownBy(() -> b.endpoint("tcp://*:5557").build()).hasMessage("endpoint: tcp://*:5557"
        + " (expected: tcp://host:port to connect to, port + dataParallelSize - 1 <= 65535)");
    assertThatThrownBy(() -> b.endpoint("tcp://h:65535").dataParallelSize(2).build())
        .hasMessageStartingWith("endpoint: tcp://h:65535 (expected: tcp://host:port");
    assertThatThrownBy(() -> b.endpoint("udp://h:1").dataParallelSize(1).build()).hasMessage(
        "endpoint: udp://h:1 (expected: tcp://host:port, ipc://path or inproc://name)");
    assertThatThrownBy(() -> b.endpoint("ipc:///tmp/kv").dataParallelSize(2).build()).hasMessage(
        "endpoint: ipc:///tmp/kv (expected: tcp:// or inproc:// with dataParallelSize 2)");
    assertThatThrownBy(() -> b.dataParallelSize(0)).hasMessage(
        "dataParallelSize: 0 (expected: > 0)");
    assertThatThrownBy(() -> b.replayTimeout(Duration.ZERO)).hasMessage(
        "replayTimeout: PT0S (expected: > 0)");
    assertThatThrownBy(() -> b.handshakeTimeout(Duration.ofMillis(-1))).hasMessage(
        "handshakeTimeout: PT-0.001S (expected: > 0)");
    assertThatThrownBy(() -> b.handshakeTimeout(Duration.ofNanos(999_999))).hasMessage(
        "handshakeTimeout: PT0.000999999S (expected: from 1 ms to 2147483647 ms)");
    assertThatThrownBy(() -> b.handshakeTimeout(Duration.ofDays(25))).hasMessage(
        "handshakeTimeout: PT600H (expected: from 1 ms to 2147483647 ms)");
    assertThatThrownBy(() -> b.reconnectBackoff(Duration.ofSeconds(2), Duration.ofSeconds(1)))
        .hasMessage("maxReconnectBackoff: PT1S (expected: >= reconnectBackoff PT2S)");
    assertThatThrownBy(() -> b.endpoint("tcp://h:5557").dataParallelSize(1)
        .replayEndpoint("tcp://h:5557").build())
        .hasMessage("replayEndpoint: tcp://h:5557 (expected: not the endpoint)");
    assertThat(Endpoints.forRank("tcp://h:5557", 3)).isEqualTo("tcp://h:5560");
    assertThat(Endpoints.forRank("inproc://kv", 2)).isEqualTo("inproc://kv_dp2");
  }
}
