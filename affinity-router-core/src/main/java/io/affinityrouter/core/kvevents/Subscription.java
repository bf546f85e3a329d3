package io.affinityrouter.core.kvevents;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;
import org.zeromq.ZMQException;

/**
 * One data-parallel rank's stream: a SUB socket on the publisher, sequence tracking, replays from
 * its ROUTER socket, and the rank's {@link KvEventDecoder}. Runs on its own thread until
 * {@link #stop()}: every socket is created, used and closed by that thread.
 */
final class Subscription implements Runnable {
  /** The replay stream's end marker: sequence number -1 as 8 signed big-endian bytes. */
  static final long END_OF_REPLAY = -1;
  /** {@link #replayedSeq} of a message no publisher sends. */
  static final long MALFORMED = Long.MIN_VALUE;
  private static final int POLL_MILLIS = 50;
  private static final long RESEND_NANOS = 250_000_000;
  private static final int ZMQ_TERMINATED = 156384765; // ETERM: the context is being closed

  private final ZContext context;
  private final String endpoint;
  private final @Nullable String replayEndpoint;
  private final byte[] topic;
  private final long replayTimeoutNanos;
  private final long backoffMillis;
  private final long maxBackoffMillis;
  private final long holdNanos;
  private final int handshakeMillis;
  private final KvEventDecoder decoder;
  private final KvEventCounters counters;
  private final String monitorAddress;
  private final CountDownLatch stopped = new CountDownLatch(1);
  private volatile boolean running = true;

  private ZMQ.@Nullable Socket dealer;
  private long expected = -1; // next sequence number, -1 before the first message
  private byte @Nullable [] lastPayload; // the batch at expected - 1, as applied
  private long duplicatesFrom;
  private long duplicatesTo;
  private long heldSeq; // a message that broke the sequence, until the next one tells
  private byte @Nullable [] heldPayload;
  private long heldAtNanos;
  private int connections;

  Subscription(ZContext context, String endpoint, @Nullable String replayEndpoint, String topic,
      long replayTimeoutNanos, long backoffMillis, long maxBackoffMillis, long holdNanos,
      int handshakeMillis, KvEventDecoder decoder, KvEventCounters counters,
      String monitorAddress) {
    this.context = context;
    this.endpoint = endpoint;
    this.replayEndpoint = replayEndpoint;
    this.topic = topic.getBytes(StandardCharsets.UTF_8);
    this.replayTimeoutNanos = replayTimeoutNanos;
    this.backoffMillis = backoffMillis;
    this.maxBackoffMillis = maxBackoffMillis;
    this.holdNanos = holdNanos;
    this.handshakeMillis = handshakeMillis;
    this.decoder = decoder;
    this.counters = counters;
    this.monitorAddress = monitorAddress;
  }

  /** Asks the thread to stop; it does within one poll interval ({@value #POLL_MILLIS} ms). */
  void stop() {
    running = false;
    stopped.countDown();
  }

  @Override
  public void run() {
    long backoff = backoffMillis;
    while (running) {
      try {
        if (session()) {
          backoff = backoffMillis;
        }
      } catch (RuntimeException e) { // ZMQException, or anything else: never end the thread
        if (!running || e instanceof ZMQException z && z.getErrorCode() == ZMQ_TERMINATED) {
          return;
        }
        counters.reconnects.increment();
        // the sockets are rebuilt after a pause that doubles while errors repeat
        await(backoff);
        backoff = Math.min(maxBackoffMillis, backoff * 2);
      }
    }
  }

  /** Runs sockets until stopped or an error; true if it received anything. */
  private boolean session() {
    ZMQ.Socket sub = null;
    ZMQ.Socket monitor = null;
    boolean received = false;
    try {
      sub = context.createSocket(SocketType.SUB);
      sub.setLinger(0);
      sub.setReconnectIVL(backoffMillis);
      sub.setReconnectIVLMax(maxBackoffMillis);
      sub.setReceiveTimeOut(POLL_MILLIS);
      sub.setHandshakeIvl(handshakeMillis); // a stalled handshake is redialled, not waited out
      sub.subscribe(topic);
      sub.monitor(monitorAddress, ZMQ.EVENT_CONNECTED);
      monitor = context.createSocket(SocketType.PAIR);
      monitor.setLinger(0);
      monitor.connect(monitorAddress);
      sub.connect(endpoint);
      if (replayEndpoint != null) {
        dealer(); // connected ahead of the first gap: a request sent while connecting can be lost
      }
      while (running) {
        countConnections(monitor);
        byte[] topicFrame = sub.recv();
        if (topicFrame == null) {
          onIdle(System.nanoTime());
          continue;
        }
        received = true;
        byte[] seq = sub.hasReceiveMore() ? sub.recv() : null;
        byte[] payload = seq != null && sub.hasReceiveMore() ? sub.recv() : null;
        boolean extra = false;
        while (sub.hasReceiveMore()) {
          sub.recv();
          extra = true;
        }
        if (seq == null || seq.length != 8 || payload == null || extra) {
          counters.decodeErrors.increment();
          continue;
        }
        onMessage(toLong(seq), payload);
      }
      return received;
    } finally {
      closeDealer();
      if (sub != null) {
        sub.close();
      }
      if (monitor != null) {
        monitor.close();
      }
    }
  }

  private void countConnections(ZMQ.Socket monitor) {
    ZMQ.Event event;
    while ((event = ZMQ.Event.recv(monitor, ZMQ.DONTWAIT)) != null) {
      if (event.getEvent() == ZMQ.EVENT_CONNECTED && connections++ > 0) {
        counters.reconnects.increment();
      }
    }
  }

  /**
   * A message that breaks the sequence (a gap or numbers starting over) is held until the next
   * one: if that one follows it, the break was real; if the stream goes on where it was, the held
   * message was an outlier (a garbage number) and is dropped, so no single message can move the
   * stream. With no next message within the hold (the builder's breakHold), the break is taken as
   * real.
   */
  void onMessage(long seq, byte[] payload) {
    onMessage(seq, payload, System.nanoTime());
  }

  void onMessage(long seq, byte[] payload, long nowNanos) {
    byte[] held = heldPayload;
    if (held != null) {
      heldPayload = null;
      if (seq == heldSeq + 1) {
        sequence(heldSeq, held);
      } else {
        counters.outOfSequence.increment();
      }
    }
    if (expected >= 0 && seq != expected && !duplicate(seq)) {
      heldSeq = seq;
      heldPayload = payload;
      heldAtNanos = nowNanos;
      return;
    }
    sequence(seq, payload);
  }

  /** No message for a poll interval: a break held long enough is taken as real. */
  void onIdle(long nowNanos) {
    byte[] held = heldPayload;
    if (held != null && nowNanos - heldAtNanos >= holdNanos) {
      heldPayload = null;
      sequence(heldSeq, held);
    }
  }

  private boolean duplicate(long seq) {
    return seq < expected && seq >= duplicatesFrom && seq < duplicatesTo;
  }

  private void sequence(long seq, byte[] payload) {
    if (expected < 0 && seq > 0) { // the publisher ran before us: its history first, if it has one
      long next = history(seq);
      if (next > seq) {
        expected = next;
        duplicatesFrom = seq;
        duplicatesTo = next;
        return;
      }
    }
    if (expected < 0 || seq == expected) {
      if (seq >= duplicatesTo) {
        duplicatesFrom = duplicatesTo = 0;
      }
      apply(seq, payload);
      return;
    }
    boolean cleared = false;
    if (seq < expected) {
      if (duplicate(seq)) {
        counters.duplicates.increment();
        return;
      }
      // numbers start over: a new publisher, whose engine starts with an empty cache
      counters.restarts.increment();
      decoder.clear();
      cleared = true;
      duplicatesFrom = duplicatesTo = 0;
      expected = 0;
      lastPayload = null;
      if (seq == 0) {
        apply(seq, payload);
        return;
      }
    }
    counters.gaps.increment();
    long gapStart = expected;
    long next = replay(gapStart, seq);
    if (next < 0) {
      // the numbers of the gap were never delivered: none of them may be taken as a duplicate
      counters.replayFailures.increment();
      if (!cleared) {
        decoder.clear();
      }
      apply(seq, payload);
      duplicatesFrom = duplicatesTo = 0;
      return;
    }
    if (next == seq) {
      apply(seq, payload);
      next = seq + 1;
    }
    expected = next;
    duplicatesFrom = gapStart;
    duplicatesTo = next;
  }

  private void apply(long seq, byte[] payload) {
    decode(payload);
    expected = seq + 1;
    lastPayload = payload;
  }

  /** A batch that does not decode lost the events after the damage: the index is dropped. */
  private void decode(byte[] payload) {
    if (!decoder.decode(payload)) {
      decoder.clear();
    }
  }

  /**
   * Asks the replay socket for every batch from {@code from} on and applies them in order.
   *
   * @return the sequence number after the last batch applied (at least {@code liveSeq} when the gap
   *     closed), or -1 if the gap could not be closed
   */
  private long replay(long from, long liveSeq) {
    if (replayEndpoint == null) {
      return -1;
    }
    counters.replays.increment();
    // From the last batch applied: if the publisher's copy differs, it is not the same stream
    // (a restarted engine already past the old numbers) and the gap cannot be closed.
    byte[] check = from > 0 ? lastPayload : null;
    long start = check != null ? from - 1 : from;
    return replayFrom(start, liveSeq, check, false);
  }

  /**
   * Asks a publisher that was running before this subscription for the history it still buffers
   * (from its oldest batch, whatever its number), applied before the first live batch.
   *
   * @return the sequence number after the last batch applied, or -1 if none could be had
   */
  private long history(long liveSeq) {
    if (replayEndpoint == null) {
      return -1;
    }
    return replayFrom(0, liveSeq, null, true); // not a gap: not counted as a replay
  }

  private long replayFrom(long start, long liveSeq, byte @Nullable [] check, boolean fromOldest) {
    long[] resent = {0};
    long next = replayStream(start, liveSeq, check, fromOldest, resent);
    if (resent[0] > 0) {
      resetDealer(); // the answer to an earlier copy of the request may still come
    }
    return next;
  }

  private long replayStream(long start, long liveSeq, byte @Nullable [] check, boolean fromOldest,
      long[] resent) {
    ZMQ.Socket socket = dealer();
    request(socket, start);
    long next = start;
    long now = System.nanoTime();
    long deadline = now + replayTimeoutNanos;
    long resendAt = now + RESEND_NANOS;
    boolean answered = false;
    while (running) {
      now = System.nanoTime();
      if (now - deadline > 0) {
        resetDealer();
        return -1;
      }
      byte[] first = socket.recv();
      if (first == null) {
        if (!answered && now - resendAt > 0) {
          // a request sent while the socket (re)connects can be lost: ask again
          request(socket, start);
          resent[0]++;
          resendAt = now + RESEND_NANOS;
        }
        continue;
      }
      answered = true;
      List<byte[]> frames = new ArrayList<>(4);
      frames.add(first);
      while (socket.hasReceiveMore() && frames.size() <= 4) {
        frames.add(socket.recv());
      }
      while (socket.hasReceiveMore()) {
        socket.recv();
      }
      long s = replayedSeq(frames);
      if (s == MALFORMED) {
        resetDealer();
        return -1;
      }
      byte[] payload = frames.get(frames.size() - 1);
      if (s == END_OF_REPLAY) {
        return check == null && next >= liveSeq ? next : -1;
      }
      if (s < next) {
        continue;
      }
      if (fromOldest && next == start) {
        next = s; // the buffer's oldest batch, wherever it starts
      }
      if (s > next || check != null && !Arrays.equals(check, payload)) {
        resetDealer(); // the publisher no longer holds the batches of the gap, or another stream
        return -1;
      }
      if (check != null) {
        check = null;
      } else {
        decode(payload);
        lastPayload = payload;
      }
      next = s + 1;
    }
    return -1;
  }

  /**
   * The sequence number of one replayed message, after the ROUTER's empty delimiter: vLLM since
   * its PR #45177 sends {@code [topic, seq, payload]} and ends with {@code ["", -1, ""]}; earlier
   * vLLM and SGLang send {@code [seq, payload]} and end with {@code [-1, ""]}; the first vLLM
   * releases ended with one empty frame. {@link #MALFORMED} for anything else.
   */
  static long replayedSeq(List<byte[]> frames) {
    int at = frames.size() > 1 && frames.get(0).length == 0 ? 1 : 0;
    int n = frames.size() - at;
    if (n == 1 && frames.get(at).length == 0) {
      return END_OF_REPLAY;
    }
    if (n != 2 && n != 3) {
      return MALFORMED;
    }
    byte[] seq = frames.get(frames.size() - 2);
    return seq.length == 8 ? toLong(seq) : MALFORMED;
  }

  private static void request(ZMQ.Socket socket, long start) {
    socket.sendMore(new byte[0]);
    socket.send(toBytes(start));
  }

  private ZMQ.Socket dealer() {
    if (dealer == null) {
      ZMQ.Socket socket = context.createSocket(SocketType.DEALER);
      socket.setLinger(0);
      socket.setReceiveTimeOut(POLL_MILLIS);
      socket.setSendTimeOut(POLL_MILLIS); // with no connected peer a DEALER send blocks; resends cover it
      socket.setHandshakeIvl(handshakeMillis);
      socket.connect(replayEndpoint);
      dealer = socket;
    }
    return dealer;
  }

  /** Replaces the replay socket, so replies still on their way cannot answer the next request. */
  private void resetDealer() {
    closeDealer();
    dealer();
  }

  private void closeDealer() {
    if (dealer != null) {
      dealer.close();
      dealer = null;
    }
  }

  private void await(long millis) {
    try {
      stopped.await(millis, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      running = false;
    }
  }

  static long toLong(byte[] b) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v = (v << 8) | (b[i] & 0xFF);
    }
    return v;
  }

  static byte[] toBytes(long v) {
    byte[] b = new byte[8];
    for (int i = 7; i >= 0; i--) {
      b[i] = (byte) v;
      v >>>= 8;
    }
    return b;
  }
}
