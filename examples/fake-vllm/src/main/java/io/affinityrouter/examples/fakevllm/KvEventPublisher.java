package io.affinityrouter.examples.fakevllm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.locks.LockSupport;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * Publishes the fake engine's prefix-cache changes as vLLM's {@code ZmqEventPublisher} does
 * ({@code vllm/distributed/kv_events.py}): on a PUB socket, messages {@code [topic, seq, payload]}
 * with the sequence number as 8 big-endian bytes and the payload a msgpack {@code KVEventBatch}
 * {@code [ts, [event...], data_parallel_rank]}, each event a tagged array ({@code ["BlockStored",
 * block_hashes, parent_block_hash, token_ids, block_size, lora_id, medium, lora_name, extra_keys,
 * group_idx, kv_cache_spec_kind, kv_cache_spec_sliding_window]}, {@code ["BlockRemoved",
 * block_hashes, medium, group_idx]}, {@code ["AllBlocksCleared"]}); and on a ROUTER socket the
 * replay of its last {@value #BUFFERED} batches, answered in vLLM's current framing
 * ({@code [identity, "", topic, seq, payload]} per batch, then {@code [identity, "", "", -1, ""]}).
 * The topic is empty, vLLM's default.
 *
 * <p>Thread-safe: callers queue batches; one thread of its own owns the sockets.
 */
final class KvEventPublisher implements AutoCloseable {
  static final int BUFFERED = 10_000;
  private static final byte[] EMPTY = new byte[0];

  private final ZContext context = new ZContext(1);
  private final ZMQ.Socket pub;
  private final ZMQ.Socket replay;
  private final int port;
  private final int replayPort;
  private final MessageBufferPacker packer = MessagePack.newDefaultBufferPacker(); // guarded by this
  private final Deque<Object[]> buffer = new ArrayDeque<>(); // {seq, payload}, guarded by this
  private final Deque<byte[][]> outbox = new ArrayDeque<>(); // guarded by this
  private final Thread thread;
  private volatile boolean running = true;
  private long seq; // guarded by this

  /** Binds both sockets on {@code host} (port 0: an ephemeral one). */
  KvEventPublisher(String host, int port, int replayPort) {
    pub = context.createSocket(SocketType.PUB);
    pub.setLinger(0);
    replay = context.createSocket(SocketType.ROUTER);
    replay.setLinger(0);
    replay.setSendTimeOut(50); // never stall on a replay peer that went away
    this.port = bind(pub, host, port);
    this.replayPort = bind(replay, host, replayPort);
    thread = new Thread(this::loop, "fake-vllm-kv-events-" + this.port);
    thread.setDaemon(true);
    thread.start();
  }

  private static int bind(ZMQ.Socket socket, String host, int port) {
    if (port == 0) {
      return socket.bindToRandomPort("tcp://" + host);
    }
    socket.bind("tcp://" + host + ":" + port);
    return port;
  }

  int port() {
    return port;
  }

  int replayPort() {
    return replayPort;
  }

  /** A {@code BlockStored} of the full blocks {@code [from, to)} of {@code tokens}. */
  synchronized void stored(long[] hashes, int from, int to, int[] tokens, int blockSize) {
    try {
      begin();
      packer.packArrayHeader(12).packString("BlockStored");
      packer.packArrayHeader(to - from);
      for (int b = from; b < to; b++) {
        packer.packLong(wire(hashes[b]));
      }
      if (from == 0) {
        packer.packNil();
      } else {
        packer.packLong(wire(hashes[from - 1]));
      }
      packer.packArrayHeader((to - from) * blockSize);
      for (int t = from * blockSize; t < to * blockSize; t++) {
        packer.packInt(tokens[t]);
      }
      packer.packInt(blockSize).packNil().packString("GPU").packNil().packNil().packInt(0)
          .packString("full_attention").packNil();
      end();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A {@code BlockRemoved} of one evicted block. */
  synchronized void removed(long hash) {
    try {
      begin();
      packer.packArrayHeader(4).packString("BlockRemoved");
      packer.packArrayHeader(1).packLong(wire(hash));
      packer.packString("GPU").packInt(0);
      end();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** An {@code AllBlocksCleared} (a reset, or sleep level 2). */
  synchronized void cleared() {
    try {
      begin();
      packer.packArrayHeader(1).packString("AllBlocksCleared");
      end();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The engine's hash as a uint64 below 2^63 (vLLM's integer hashes are uint64). */
  private static long wire(long hash) {
    return hash & Long.MAX_VALUE;
  }

  /** Batches published so far (the next sequence number). */
  synchronized long published() {
    return seq;
  }

  private void begin() throws IOException {
    packer.clear();
    packer.packArrayHeader(3).packDouble(System.currentTimeMillis() / 1000.0);
    packer.packArrayHeader(1);
  }

  private void end() throws IOException {
    packer.packInt(0); // data_parallel_rank
    byte[] payload = packer.toByteArray();
    long s = seq++;
    buffer.addLast(new Object[] {s, payload});
    if (buffer.size() > BUFFERED) {
      buffer.removeFirst();
    }
    outbox.addLast(new byte[][] {EMPTY, seqBytes(s), payload});
  }

  private static byte[] seqBytes(long seq) {
    return ByteBuffer.allocate(8).putLong(seq).array();
  }

  private void loop() {
    while (running) {
      byte[][] message;
      synchronized (this) {
        message = outbox.pollFirst();
      }
      if (message != null) {
        pub.send(message[0], ZMQ.SNDMORE);
        pub.send(message[1], ZMQ.SNDMORE);
        pub.send(message[2], 0);
        continue;
      }
      byte[] identity = replay.recv(ZMQ.DONTWAIT);
      if (identity == null) {
        LockSupport.parkNanos(1_000_000); // idle
        continue;
      }
      byte[] delimiter = replay.hasReceiveMore() ? replay.recv() : null;
      byte[] start = replay.hasReceiveMore() ? replay.recv() : null;
      while (replay.hasReceiveMore()) {
        replay.recv();
      }
      if (delimiter == null || start == null || start.length != 8) {
        continue;
      }
      answer(identity, ByteBuffer.wrap(start).getLong());
    }
    context.close();
  }

  private void answer(byte[] identity, long from) {
    Object[][] batches;
    synchronized (this) {
      batches = buffer.toArray(new Object[0][]);
    }
    for (Object[] b : batches) {
      if ((long) b[0] >= from) {
        send(identity, EMPTY, seqBytes((long) b[0]), (byte[]) b[1]);
      }
    }
    send(identity, EMPTY, seqBytes(-1), EMPTY);
  }

  private void send(byte[] identity, byte[] topic, byte[] seq, byte[] payload) {
    replay.send(identity, ZMQ.SNDMORE);
    replay.send(EMPTY, ZMQ.SNDMORE);
    replay.send(topic, ZMQ.SNDMORE);
    replay.send(seq, ZMQ.SNDMORE);
    replay.send(payload, 0);
  }

  /** Stops the thread and closes the sockets. */
  @Override
  public void close() {
    running = false;
    try {
      thread.join(5_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
