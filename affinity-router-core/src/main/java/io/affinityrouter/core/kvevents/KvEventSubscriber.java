package io.affinityrouter.core.kvevents;

import io.affinityrouter.PrefixCacheEvents;
import io.affinityrouter.internal.Checks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.zeromq.ZContext;

/**
 * Subscribes to one replica's KV-cache events (vLLM's {@code ZmqEventPublisher}, SGLang's KV
 * events) and feeds them to a {@link PrefixCacheEvents} sink, normally
 * {@link io.affinityrouter.Router#cacheEvents()}, so the router's prefix index follows what the
 * engine really holds.
 *
 * <pre>{@code
 * KvEventSubscriber events = KvEventSubscriber.builder(router.cacheEvents())
 *     .replicaId("r1").model("llama-3-8b")
 *     .endpoint("tcp://10.0.0.7:5557").replayEndpoint("tcp://10.0.0.7:5558")
 *     .build();
 * events.start();
 * ...
 * events.close();
 * }</pre>
 *
 * <p>Each data-parallel rank is one ZeroMQ SUB socket (port + rank), read by its own daemon thread,
 * never the caller's. Messages are {@code [topic, sequence (8 bytes, big-endian), payload]};
 * payloads are decoded by a {@link KvEventDecoder}. A sequence gap asks the publisher's replay
 * (ROUTER) socket for the missing batches (its replies framed as vLLM frames them since its PR
 * #45177, {@code [topic, seq, payload]}, or as earlier vLLM and SGLang do, {@code [seq, payload]});
 * the first batch a subscription sees, from a publisher that was running before it, first asks
 * the replay socket for the history it still buffers (as llm-d's subscriber does); a message that
 * breaks the sequence waits for the next one, up to 1 s, so a single garbage
 * number is dropped ({@link KvEventStats#outOfSequence}) rather than followed. When the missing
 * batches cannot be had (no replay endpoint, no answer
 * within {@link Builder#replayTimeout}, or the publisher no longer holds them), the replica's
 * exact index is dropped ({@link PrefixCacheEvents#allBlocksCleared}) so the router falls back to
 * its approximate locality instead of trusting a stale view. Sequence numbers that start over (a
 * restarted engine) drop it too. Lost connections are re-established by ZeroMQ with a back-off from
 * {@link Builder#reconnectBackoff}'s initial to its maximum interval; a connection whose ZeroMQ
 * handshake has not finished within {@link Builder#handshakeTimeout} is dropped and dialled again;
 * socket errors rebuild the sockets after the same back-off. Nothing the publisher sends makes the
 * subscriber throw: damaged messages and events are counted in {@link #stats()} and skipped.
 *
 * <p>All ranks feed the same replica id. Thread-safe: {@link #start()}, {@link #close()} and
 * {@link #stats()} may be called from any thread.
 */
public final class KvEventSubscriber implements AutoCloseable {
  /** How long a replay may take unless {@link Builder#replayTimeout} says otherwise: 2 s. */
  public static final Duration DEFAULT_REPLAY_TIMEOUT = Duration.ofSeconds(2);
  /** The first reconnect interval unless {@link Builder#reconnectBackoff} says otherwise: 100 ms. */
  public static final Duration DEFAULT_RECONNECT_BACKOFF = Duration.ofMillis(100);
  /** The longest reconnect interval unless {@link Builder#reconnectBackoff} says otherwise: 10 s. */
  public static final Duration DEFAULT_MAX_RECONNECT_BACKOFF = Duration.ofSeconds(10);
  /** How long a sequence break waits for the next message unless {@link Builder#breakHold}: 1 s. */
  public static final Duration DEFAULT_BREAK_HOLD = Duration.ofSeconds(1);
  /** How long a connection's handshake may take unless {@link Builder#handshakeTimeout}: 2 s. */
  public static final Duration DEFAULT_HANDSHAKE_TIMEOUT = Duration.ofSeconds(2);

  private static final AtomicInteger INSTANCES = new AtomicInteger();
  private static final long JOIN_MILLIS = 10_000;

  private final KvEventCounters counters = new KvEventCounters();
  private final ZContext context = new ZContext(1);
  private final List<Subscription> subscriptions = new ArrayList<>();
  private final List<Thread> threads = new ArrayList<>();
  private boolean started; // guarded by this
  private boolean closed; // guarded by this

  private KvEventSubscriber(Builder b) {
    String replicaId = Objects.requireNonNull(b.replicaId, "replicaId"); // checked by build()
    String endpoint = Objects.requireNonNull(b.endpoint, "endpoint");
    int instance = INSTANCES.incrementAndGet();
    for (int rank = 0; rank < b.dataParallelSize; rank++) {
      KvEventDecoder decoder =
          KvEventDecoder.create(b.sink, replicaId, b.model, counters);
      Subscription s = new Subscription(context, Endpoints.forRank(endpoint, rank),
          b.replayEndpoint == null ? null : Endpoints.forRank(b.replayEndpoint, rank), b.topic,
          b.replayTimeout.toNanos(), b.reconnectBackoff.toMillis(),
          b.maxReconnectBackoff.toMillis(), b.breakHold.toNanos(),
          (int) b.handshakeTimeout.toMillis(), decoder, counters,
          "inproc://kv-events-monitor-" + instance + "-" + rank);
      subscriptions.add(s);
      Thread t = new Thread(s, "kv-events-" + replicaId + "-dp" + rank);
      t.setDaemon(true);
      threads.add(t);
    }
  }

  /**
   * A builder for a subscriber that feeds {@code sink}.
   *
   * @throws NullPointerException if {@code sink} is null
   */
  public static Builder builder(PrefixCacheEvents sink) {
    return new Builder(Objects.requireNonNull(sink, "sink"));
  }

  /**
   * Connects and starts receiving, on the subscriber's own threads; returns at once.
   *
   * @throws IllegalStateException if already started or closed
   */
  public synchronized void start() {
    if (closed) {
      throw new IllegalStateException("closed");
    }
    if (started) {
      throw new IllegalStateException("already started");
    }
    started = true;
    threads.forEach(Thread::start);
  }

  /** The counters so far, over all ranks. */
  public KvEventStats stats() {
    return counters.snapshot();
  }

  /**
   * Stops the threads, waiting for them (each stops within about 50 ms, or at once from a replay
   * or a back-off), and closes the sockets. Idempotent; the sink gets no call after it returns.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    subscriptions.forEach(Subscription::stop);
    boolean interrupted = false;
    for (Thread t : threads) {
      if (t.isAlive()) {
        try {
          t.join(JOIN_MILLIS);
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    }
    context.close();
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Whether {@link #start()} was called and {@link #close()} was not. */
  public synchronized boolean isRunning() {
    return started && !closed;
  }

  /**
   * Settings of a {@link KvEventSubscriber}. Each setter checks its argument and throws
   * {@link IllegalArgumentException} (or {@link NullPointerException}) naming it. Not thread-safe.
   */
  public static final class Builder {
    private final PrefixCacheEvents sink;
    private @Nullable String replicaId;
    private @Nullable String model;
    private @Nullable String endpoint;
    private @Nullable String replayEndpoint;
    private String topic = "";
    private int dataParallelSize = 1;
    private Duration replayTimeout = DEFAULT_REPLAY_TIMEOUT;
    private Duration reconnectBackoff = DEFAULT_RECONNECT_BACKOFF;
    private Duration maxReconnectBackoff = DEFAULT_MAX_RECONNECT_BACKOFF;
    private Duration breakHold = DEFAULT_BREAK_HOLD;
    private Duration handshakeTimeout = DEFAULT_HANDSHAKE_TIMEOUT;

    private Builder(PrefixCacheEvents sink) {
      this.sink = sink;
    }

    /** Sets the replica the events come from, as the router knows it (required). */
    public Builder replicaId(String replicaId) {
      Objects.requireNonNull(replicaId, "replicaId");
      if (replicaId.isEmpty()) {
        throw new IllegalArgumentException("replicaId: \"\" (expected: not empty)");
      }
      this.replicaId = replicaId;
      return this;
    }

    /**
     * Sets the model the engine's blocks are stored for, as requests name it in
     * {@code RoutingRequest.model()} (default none). Blocks of a LoRA adapter are stored for the
     * adapter's name instead.
     */
    public Builder model(@Nullable String model) {
      this.model = model;
      return this;
    }

    /**
     * Sets the publisher's PUB endpoint to connect to (required), e.g. {@code tcp://host:5557};
     * with {@link #dataParallelSize} n, ranks 1..n-1 are at the following ports.
     */
    public Builder endpoint(String endpoint) {
      this.endpoint = Objects.requireNonNull(endpoint, "endpoint");
      return this;
    }

    /**
     * Sets the publisher's replay (ROUTER) endpoint, e.g. {@code tcp://host:5558} (default none:
     * every gap drops the replica's exact index).
     */
    public Builder replayEndpoint(@Nullable String replayEndpoint) {
      this.replayEndpoint = replayEndpoint;
      return this;
    }

    /** Sets the topic prefix to subscribe to (default {@code ""}: every message). */
    public Builder topic(String topic) {
      this.topic = Objects.requireNonNull(topic, "topic");
      return this;
    }

    /** Sets the engine's data-parallel size: one subscription per rank (default 1). */
    public Builder dataParallelSize(int ranks) {
      this.dataParallelSize = Checks.positive(ranks, "dataParallelSize");
      return this;
    }

    /** Sets how long a replay may take before the gap counts as lost (default 2 s). */
    public Builder replayTimeout(Duration timeout) {
      this.replayTimeout = Checks.positive(timeout, "replayTimeout");
      return this;
    }

    /**
     * Sets how long a message that breaks the sequence (a jump, or numbers starting over) waits
     * for the next one before the break is taken as real (default 1 s). If the next message goes
     * on where the stream was, the held one was a garbage number and is dropped; a longer hold
     * tells the two apart on a slower network, at the cost of applying a real restart later.
     */
    public Builder breakHold(Duration hold) {
      this.breakHold = Checks.positive(hold, "breakHold");
      return this;
    }

    /**
     * Sets how long a new connection's ZeroMQ handshake may take before the connection is dropped
     * and dialled again (default 2 s; from 1 ms to 24 days). A few round trips complete it; a
     * connection that stalls in it receives nothing until then (JeroMQ 0.6.0 leaves about one
     * connect in a hundred on a busy machine without its greeting, zeromq/jeromq#1022).
     */
    public Builder handshakeTimeout(Duration timeout) {
      Checks.positive(timeout, "handshakeTimeout");
      if (timeout.toMillis() < 1 || timeout.toMillis() > Integer.MAX_VALUE) {
        throw new IllegalArgumentException(
            "handshakeTimeout: " + timeout + " (expected: from 1 ms to " + Integer.MAX_VALUE
                + " ms)");
      }
      this.handshakeTimeout = timeout;
      return this;
    }

    /** Sets the first and the longest interval between reconnects (default 100 ms and 10 s). */
    public Builder reconnectBackoff(Duration initial, Duration max) {
      Checks.positive(initial, "reconnectBackoff");
      Checks.positive(max, "maxReconnectBackoff");
      if (max.compareTo(initial) < 0) {
        throw new IllegalArgumentException(
            "maxReconnectBackoff: " + max + " (expected: >= reconnectBackoff " + initial + ")");
      }
      this.reconnectBackoff = initial;
      this.maxReconnectBackoff = max;
      return this;
    }

    /**
     * Builds the subscriber; it connects on {@link KvEventSubscriber#start()}.
     *
     * @throws IllegalStateException if the replica id or the endpoint is not set
     * @throws IllegalArgumentException if an endpoint is not one to connect to
     */
    public KvEventSubscriber build() {
      if (replicaId == null) {
        throw new IllegalStateException("replicaId: not set (expected: the replica's id)");
      }
      if (endpoint == null) {
        throw new IllegalStateException("endpoint: not set (expected: tcp://host:port)");
      }
      Endpoints.check(endpoint, "endpoint", dataParallelSize);
      if (replayEndpoint != null) {
        Endpoints.check(replayEndpoint, "replayEndpoint", dataParallelSize);
        if (replayEndpoint.equals(endpoint)) {
          throw new IllegalArgumentException(
              "replayEndpoint: " + replayEndpoint + " (expected: not the endpoint)");
        }
      }
      return new KvEventSubscriber(this);
    }
  }
}
