package io.affinityrouter.core.kvevents;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.atomic.AtomicBoolean;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * A JeroMQ publisher that behaves as vLLM's {@code ZmqEventPublisher}: PUB messages
 * {@code [topic, seq, payload]}, a bounded replay buffer, and a ROUTER socket that answers
 * {@code [identity, "", start_seq]} per buffered batch from {@code start_seq} on, then with an end
 * marker, framed as {@link Framing} says. Faults on demand:
 * a batch not sent live, the buffer forgetting old batches, a replay socket that never answers.
 * All socket work happens on the publisher's own thread.
 */
final class TestPublisher implements AutoCloseable {
  /** How replies to a replay request are framed (after {@code [identity, ""]}). */
  enum Framing {
    /** vLLM since PR #45177: {@code [topic, seq, payload]}, then {@code ["", -1, ""]}. */
    VLLM,
    /** vLLM before it, and SGLang: {@code [seq, payload]}, then {@code [-1, ""]}. */
    VLLM_BEFORE_45177_AND_SGLANG
  }

  private final ZContext context = new ZContext(1);
  private final ZMQ.Socket pub;
  private final ZMQ.Socket router;
  private final int port;
  private final int replayPort;
  private final Deque<Object[]> buffer = new ArrayDeque<>(); // {seq, payload}, guarded by this
  private final Deque<Object[]> outbox = new ArrayDeque<>(); // frames to send, guarded by this
  private final AtomicBoolean running = new AtomicBoolean(true);
  private final Thread thread;
  private final byte[] topic;
  private long seq;
  private volatile boolean answerReplays = true;
  private final Framing framing;

  TestPublisher(String topic, int port, int replayPort) {
    this(topic, port, replayPort, Framing.VLLM);
  }

  TestPublisher(String topic, int port, int replayPort, Framing framing) {
    this.framing = framing;
    this.topic = topic.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    pub = context.createSocket(SocketType.PUB);
    pub.setLinger(0);
    router = context.createSocket(SocketType.ROUTER);
    router.setLinger(0);
    this.port = port == 0 ? pub.bindToRandomPort("tcp://127.0.0.1") : bind(pub, port);
    this.replayPort = replayPort == 0 ? router.bindToRandomPort("tcp://127.0.0.1")
        : bind(router, replayPort);
    thread = new Thread(this::loop, "test-publisher-" + this.port);
    thread.setDaemon(true);
    thread.start();
  }

  static TestPublisher start() {
    return new TestPublisher("", 0, 0);
  }

  static TestPublisher start(Framing framing) {
    return new TestPublisher("", 0, 0, framing);
  }

  private static int bind(ZMQ.Socket socket, int port) {
    socket.bind("tcp://127.0.0.1:" + port);
    return port;
  }

  String endpoint() {
    return "tcp://127.0.0.1:" + port;
  }

  String replayEndpoint() {
    return "tcp://127.0.0.1:" + replayPort;
  }

  int port() {
    return port;
  }

  int replayPort() {
    return replayPort;
  }

  /** Publishes a batch with the next sequence number; returns the number. */
  long publish(byte[] payload) {
    return publish(payload, true);
  }

  /** Buffers a batch for replay but does not send it live (a lost message); returns its number. */
  long lose(byte[] payload) {
    return publish(payload, false);
  }

  private synchronized long publish(byte[] payload, boolean live) {
    long s = seq++;
    buffer.addLast(new Object[] {s, payload});
    if (live) {
      outbox.addLast(new Object[] {topic, Subscription.toBytes(s), payload});
    }
    return s;
  }

  /** Sends raw frames as one message (for malformed messages). */
  synchronized void sendFrames(byte[]... frames) {
    outbox.addLast(frames);
  }

  /** Forgets the oldest buffered batches until {@code first} is the oldest left. */
  synchronized void forgetBefore(long first) {
    while (!buffer.isEmpty() && (long) buffer.peekFirst()[0] < first) {
      buffer.removeFirst();
    }
  }

  /** Stops answering replay requests (they are read and dropped). */
  void muteReplays() {
    answerReplays = false;
  }

  private void loop() {
    while (running.get()) {
      Object[] message;
      synchronized (this) {
        message = outbox.pollFirst();
      }
      if (message != null) {
        for (int i = 0; i < message.length; i++) {
          pub.send((byte[]) message[i], i < message.length - 1 ? ZMQ.SNDMORE : 0);
        }
        continue;
      }
      byte[] identity = router.recv(ZMQ.DONTWAIT);
      if (identity == null) {
        java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // idle: nothing queued
        continue;
      }
      byte[] empty = router.hasReceiveMore() ? router.recv() : null;
      byte[] start = router.hasReceiveMore() ? router.recv() : null;
      if (empty == null || start == null || !answerReplays) {
        continue;
      }
      long from = Subscription.toLong(start);
      Object[][] snapshot;
      synchronized (this) {
        snapshot = buffer.toArray(new Object[0][]);
      }
      for (Object[] entry : snapshot) {
        if ((long) entry[0] >= from) {
          reply(identity, topic, Subscription.toBytes((long) entry[0]), (byte[]) entry[1]);
        }
      }
      reply(identity, new byte[0], Subscription.toBytes(Subscription.END_OF_REPLAY), new byte[0]);
    }
  }

  private void reply(byte[] identity, byte[] topicFrame, byte[] seqFrame, byte[] payload) {
    router.sendMore(identity);
    router.sendMore(new byte[0]);
    if (framing == Framing.VLLM) {
      router.sendMore(topicFrame);
    }
    router.sendMore(seqFrame);
    router.send(payload);
  }

  @Override
  public void close() {
    if (running.compareAndSet(true, false)) {
      try {
        thread.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      pub.close();
      router.close();
      context.close();
    }
  }
}
