package io.affinityrouter.core;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaLoad;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.StampedLock;
import org.jspecify.annotations.Nullable;

/**
 * One router's own view of the work it has committed to one replica: in-flight requests, committed
 * tokens (prompt plus expected output, the unit of the token limit), prompt tokens still to prefill
 * and the expected decode tokens of open leases, the estimated prefill seconds still queued; plus a
 * per-sequence decode rate learned from completed leases.
 *
 * <p>Admission is atomic against both limits: {@link #tryAcquire} never lets the request count or
 * the token count exceed its limit, whatever the concurrency (a request that fails the token check
 * briefly holds a request slot, which can only make a racing admission fail, never overshoot).
 * Counters never go negative: every release is matched by exactly one acquire, which
 * {@link Lease} guarantees. Thread-safe.
 */
final class ReplicaState {
  /** Decay time of {@link #writtenTokensPerSecond}, seconds: {@value}. */
  static final double WRITE_WINDOW_SECONDS = 60;

  private final String id;
  private final int ordinal;
  private final long eventsKey;
  private final long idHash;
  private volatile long usedMillis; // when a caller last offered the replica, to the second
  private final AtomicInteger inFlightRequests = new AtomicInteger();
  private final AtomicLong inFlightTokens = new AtomicLong();
  private final AtomicLong pendingPrefillTokens = new AtomicLong();
  private final AtomicLong pendingDecodeTokens = new AtomicLong();
  private final Ewma decodeTokensPerSecondPerSequence;
  private final StampedLock workLock = new StampedLock();
  private double workEnqueued; // running totals of queued and done prefill work, seconds
  private double workDone;
  private long workStampMillis; // when the queue head last made known progress
  private double written; // tokens sent to be written to the KV cache, decayed; under workLock
  private long writtenStampMillis;
  private volatile long engineCounter = -1; // the engine's kvWrittenTokens last seen
  private double engineWritten; // the counter's increments, decayed; under workLock
  private long engineStampMillis;
  private long engineSinceMillis; // when the counter was first seen (or seen to restart)
  private double turns; // session turns routed here, decayed over the return interval; under workLock
  private long turnsStampMillis;
  private volatile PeerQueue peerQueue = PeerQueue.NONE; // other routers' share, if shared
  private volatile Snapshot snapshot = Snapshot.NONE;

  /** The newest engine load seen and this router's in-flight requests when it was first seen. */
  private record Snapshot(@Nullable ReplicaLoad load, int own) {
    static final Snapshot NONE = new Snapshot(null, 0);
  }

  /**
   * Other routers' queued prefill seconds on the replica, as of {@code stampMillis}, and the
   * session turns per second they route there.
   */
  private record PeerQueue(double seconds, long stampMillis, double turnsPerSecond) {
    static final PeerQueue NONE = new PeerQueue(0, 0, 0);
  }

  private static final VarHandle LATEST;

  static {
    try {
      LATEST = MethodHandles.lookup().findVarHandle(ReplicaState.class,
          "latest", Replica.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  @SuppressWarnings("unused") // through LATEST
  private @Nullable Replica latest; // the newest snapshot a caller passed, for re-offers

  ReplicaState(String id, int ordinal, double decodeRatePrior) {
    this(id, ordinal, 0, decodeRatePrior, 0);
  }

  /**
   * Creates a state.
   *
   * @param incarnation how many replicas held {@code ordinal} before this one
   * @param nowMillis when it is created (its first use)
   */
  ReplicaState(String id, int ordinal, int incarnation, double decodeRatePrior, long nowMillis) {
    this.id = id;
    this.ordinal = ordinal;
    this.eventsKey = ordinal < 0 ? -1 : ordinal | ((long) incarnation << 12);
    this.usedMillis = nowMillis;
    this.idHash = Rendezvous.idHash(id);
    this.decodeTokensPerSecondPerSequence = new Ewma(0.1, decodeRatePrior);
  }

  /** Records the snapshot of this replica a caller passed (a release write, when it changed). */
  void seen(Replica replica) {
    if (LATEST.getOpaque(this) != replica) {
      LATEST.setRelease(this, replica);
    }
  }

  /** The newest snapshot seen, or {@code fallback} if none. */
  Replica latest(Replica fallback) {
    Object r = LATEST.getAcquire(this);
    return r != null ? (Replica) r : fallback;
  }

  /** The replica's id. */
  String id() {
    return id;
  }

  /** The replica's small-integer ordinal in the router (its key in the prefix index). */
  int ordinal() {
    return ordinal;
  }

  /**
   * The ordinal and its incarnation, unique over the router's life ({@code -1} without an
   * ordinal): keys engine-hash mappings, so a reused ordinal never reads its predecessor's.
   */
  long eventsKey() {
    return eventsKey;
  }

  /** Records a use at {@code nowMillis}; writes at most once a second. */
  void touch(long nowMillis) {
    if (nowMillis - usedMillis >= 1000) {
      usedMillis = nowMillis;
    }
  }

  /** When the replica was last used (offered, refreshed or sent an event), to the second. */
  long usedMillis() {
    return usedMillis;
  }

  /** A 64-bit hash of the id, for rendezvous hashing. */
  long idHash() {
    return idHash;
  }

  /** Requests this router has in flight on the replica. */
  int inFlightRequests() {
    return inFlightRequests.get();
  }

  /** Tokens (prompt + expected output) this router has in flight on the replica. */
  long inFlightTokens() {
    return inFlightTokens.get();
  }

  /** Uncached prompt tokens of in-flight requests whose first token has not arrived. */
  long pendingPrefillTokens() {
    return pendingPrefillTokens.get();
  }

  /** Expected output tokens of in-flight requests. */
  long pendingDecodeTokens() {
    return pendingDecodeTokens.get();
  }

  /** The learned decode rate of one sequence, output tokens per second. */
  double decodeTokensPerSecondPerSequence() {
    return decodeTokensPerSecondPerSequence.get();
  }

  /** Whether one more request of {@code tokens} tokens fits within the limits now. */
  boolean fits(int maxRequests, long maxTokens, long tokens) {
    int requests = inFlightRequests.get();
    if (requests >= maxRequests) {
      return false;
    }
    long committed = inFlightTokens.get();
    return requests == 0 || committed + tokens <= maxTokens;
  }

  /**
   * Admits one request of {@code tokens} committed tokens if both limits allow it. A request larger
   * than the token limit is admitted only on an otherwise idle replica, so that it can run at all.
   *
   * @return whether the request was admitted (and must later be released exactly once)
   */
  boolean tryAcquire(int maxRequests, long maxTokens, long tokens) {
    int requests;
    do {
      requests = inFlightRequests.get();
      if (requests >= maxRequests) {
        return false;
      }
    } while (!inFlightRequests.compareAndSet(requests, requests + 1));
    long committed;
    do {
      committed = inFlightTokens.get();
      if (committed + tokens > maxTokens && !(requests == 0 && committed == 0)) {
        inFlightRequests.decrementAndGet();
        return false;
      }
    } while (!inFlightTokens.compareAndSet(committed, committed + tokens));
    return true;
  }

  /**
   * Gives back an admission that {@link #tryAcquire} granted but no lease took over (the request went
   * elsewhere).
   */
  void cancelAcquire(long tokens) {
    inFlightTokens.addAndGet(-tokens);
    inFlightRequests.decrementAndGet();
  }

  void addPending(long prefillTokens, long decodeTokens) {
    pendingPrefillTokens.addAndGet(prefillTokens);
    pendingDecodeTokens.addAndGet(decodeTokens);
  }

  void prefillDone(long prefillTokens) {
    pendingPrefillTokens.addAndGet(-prefillTokens);
  }

  void release(long tokens, long remainingPrefill, long decodeTokens) {
    if (remainingPrefill != 0) {
      pendingPrefillTokens.addAndGet(-remainingPrefill);
    }
    pendingDecodeTokens.addAndGet(-decodeTokens);
    inFlightTokens.addAndGet(-tokens);
    inFlightRequests.decrementAndGet();
  }

  /**
   * Estimated seconds of prefill work this router queued on the replica that is not done yet: the
   * estimated prefill of its requests without a first token, less the time the replica has had to
   * work on them since the last first token (a fluid FIFO queue: the engine prefills in arrival
   * order). Lock-free unless a write races the read.
   */
  double pendingPrefillSeconds(long nowMillis) {
    long stamp = workLock.tryOptimisticRead();
    double pending = pendingWork(nowMillis);
    if (!workLock.validate(stamp)) {
      stamp = workLock.readLock();
      try {
        pending = pendingWork(nowMillis);
      } finally {
        workLock.unlockRead(stamp);
      }
    }
    return pending;
  }

  private double pendingWork(long nowMillis) {
    double elapsed = Math.max(0, nowMillis - workStampMillis) / 1000.0;
    return Math.max(0, workEnqueued - workDone - elapsed);
  }

  /**
   * Sets the prefill the other routers of the fleet have queued on the replica, in seconds, as a
   * {@link io.affinityrouter.spi.LoadExchange} reported it at {@code nowMillis}.
   */
  void peerQueue(double seconds, double turnsPerSecond, long nowMillis) {
    peerQueue = seconds > 0 || turnsPerSecond > 0
        ? new PeerQueue(seconds, nowMillis, turnsPerSecond) : PeerQueue.NONE;
  }

  /** The session turns per second the other routers reported routing here; 0 without. */
  double peerTurnsPerSecond() {
    return peerQueue.turnsPerSecond();
  }

  /**
   * The other routers' queued prefill on the replica, seconds, drained by the time since it was
   * reported (the engine works through it as through this router's own queue); 0 without an
   * exchange.
   */
  double peerPendingSeconds(long nowMillis) {
    PeerQueue q = peerQueue;
    if (q.seconds() == 0) {
      return 0;
    }
    return Math.max(0, q.seconds() - Math.max(0, nowMillis - q.stampMillis()) / 1000.0);
  }

  /**
   * Queues {@code seconds} of prefill work and counts {@code writtenTokens} sent to be written to
   * the KV cache; returns the request's place (its end) in the queue.
   */
  double enqueueWork(double seconds, long writtenTokens, long nowMillis) {
    long stamp = workLock.writeLock();
    try {
      written = decayedWritten(nowMillis) + writtenTokens;
      writtenStampMillis = Math.max(writtenStampMillis, nowMillis);
      if (pendingWork(nowMillis) == 0) { // idle: the new work starts now
        workDone = workEnqueued;
        workStampMillis = nowMillis;
      }
      workEnqueued += seconds;
      return workEnqueued;
    } finally {
      workLock.unlockWrite(stamp);
    }
  }

  /** The work up to {@code place} is done: the first token of the request at that place arrived. */
  void workDoneThrough(double place, long nowMillis) {
    long stamp = workLock.writeLock();
    try {
      double through = Math.min(place, workEnqueued);
      if (through > workDone) {
        workDone = through;
        workStampMillis = nowMillis;
      }
    } finally {
      workLock.unlockWrite(stamp);
    }
  }

  /** Withdraws {@code seconds} of queued work (a request closed before its first token). */
  void withdrawWork(double seconds) {
    long stamp = workLock.writeLock();
    try {
      workEnqueued -= seconds;
      workDone = Math.min(workDone, workEnqueued);
    } finally {
      workLock.unlockWrite(stamp);
    }
  }

  /**
   * Counts a session turn routed here, in a count that decays with time constant
   * {@code windowSeconds} (the sessions' return interval: the count is then about the sessions
   * that come back here).
   */
  void countTurn(long nowMillis, double windowSeconds) {
    long stamp = workLock.writeLock();
    try {
      turns = decayed(turns, turnsStampMillis, nowMillis, windowSeconds) + 1;
      turnsStampMillis = Math.max(turnsStampMillis, nowMillis);
    } finally {
      workLock.unlockWrite(stamp);
    }
  }

  /**
   * The session turns this router routes here per second, over the last {@code windowSeconds}
   * (as {@link #countTurn} counted them). Lock-free unless a write races the read.
   */
  double turnsPerSecond(long nowMillis, double windowSeconds) {
    long stamp = workLock.tryOptimisticRead();
    double t = decayed(turns, turnsStampMillis, nowMillis, windowSeconds);
    if (!workLock.validate(stamp)) {
      stamp = workLock.readLock();
      try {
        t = decayed(turns, turnsStampMillis, nowMillis, windowSeconds);
      } finally {
        workLock.unlockRead(stamp);
      }
    }
    return t / windowSeconds;
  }

  private double decayedWritten(long nowMillis) {
    return decayed(written, writtenStampMillis, nowMillis, WRITE_WINDOW_SECONDS);
  }

  /** {@code value} as of {@code stampMillis}, decayed with time constant {@code window} s. */
  private static double decayed(double value, long stampMillis, long nowMillis, double window) {
    double dt = Math.max(0, nowMillis - stampMillis) / 1000.0;
    return value * Math.exp(-dt / window);
  }

  /**
   * Tokens per second this router sends to be written to the replica's KV cache (each routed
   * request's uncached prompt and expected output), with exponential decay over
   * {@value #WRITE_WINDOW_SECONDS} s. Lock-free unless a write races the read.
   */
  double writtenTokensPerSecond(long nowMillis) {
    long stamp = workLock.tryOptimisticRead();
    double w = decayedWritten(nowMillis);
    if (!workLock.validate(stamp)) {
      stamp = workLock.readLock();
      try {
        w = decayedWritten(nowMillis);
      } finally {
        workLock.unlockRead(stamp);
      }
    }
    return w / WRITE_WINDOW_SECONDS;
  }

  /**
   * Feeds the engine's count of tokens written to its KV cache ({@code ReplicaLoad#kvWrittenTokens},
   * {@code -1}: not reported). Called on every decision with the replica's current snapshot; only a
   * changed counter takes the lock. A counter below half the last one is an engine restart: counting
   * starts again from it; a slightly lower one is an older snapshot (decisions on other threads may
   * still hold the previous scrape) and is ignored.
   */
  void observeEngineWritten(long counter, long nowMillis) {
    long last = engineCounter;
    if (counter < 0 || counter == last || counter < last && counter >= last / 2) {
      return;
    }
    long stamp = workLock.writeLock();
    try {
      last = engineCounter;
      if (counter == last || counter < last && counter >= last / 2) {
        return;
      }
      if (last < 0 || counter < last) {
        engineWritten = 0;
        engineSinceMillis = nowMillis;
      } else {
        engineWritten = decayedEngineWritten(nowMillis) + (counter - last);
      }
      engineStampMillis = Math.max(engineStampMillis, nowMillis);
      engineCounter = counter;
    } finally {
      workLock.unlockWrite(stamp);
    }
  }

  private double decayedEngineWritten(long nowMillis) {
    return decayed(engineWritten, engineStampMillis, nowMillis, WRITE_WINDOW_SECONDS);
  }

  /**
   * Tokens per second the engine writes to its KV cache by its own counter (every gateway's
   * traffic), with exponential decay over {@value #WRITE_WINDOW_SECONDS} s and corrected for the
   * time since the counter was first seen; {@code -1} until the counter has been seen to move.
   */
  double engineWrittenTokensPerSecond(long nowMillis) {
    if (engineCounter < 0) {
      return -1;
    }
    long stamp = workLock.tryOptimisticRead();
    double rate = engineRate(nowMillis);
    if (!workLock.validate(stamp)) {
      stamp = workLock.readLock();
      try {
        rate = engineRate(nowMillis);
      } finally {
        workLock.unlockRead(stamp);
      }
    }
    return rate;
  }

  private double engineRate(long nowMillis) {
    double elapsed = Math.max(0, nowMillis - engineSinceMillis) / 1000.0;
    if (!(engineWritten > 0) || elapsed <= 0) {
      return -1;
    }
    double seen = 1 - Math.exp(-elapsed / WRITE_WINDOW_SECONDS);
    return decayedEngineWritten(nowMillis) / (WRITE_WINDOW_SECONDS * seen);
  }

  /**
   * How long a block written now stays in this replica's KV cache when it is written at
   * {@code rate} tokens per second: the KV not {@linkplain #heldTokens held} by its requests over
   * the rate, seconds; infinite at rate 0, NaN when the load carries no capacity.
   */
  double cacheLifetimeSeconds(ReplicaLoad load, double rate) {
    long capacity = load.kvCapacityTokens();
    if (capacity <= 0) {
      return Double.NaN;
    }
    return rate > 0 ? Math.max(0, capacity - heldTokens(load)) / rate : Double.POSITIVE_INFINITY;
  }

  /**
   * The KV tokens the replica's requests will hold by their last token: this router's in-flight
   * tokens, plus the requests the engine reports running and waiting beyond the ones this router
   * had in flight when that snapshot was first {@linkplain #observeLoad seen} (other gateways'
   * requests, each taken as the size of this router's). Requests this router sends after the
   * snapshot add to it at once, though the engine's count has not caught up with them.
   */
  double heldTokens(ReplicaLoad load) {
    double held = inFlightTokens();
    int own = inFlightRequests();
    Snapshot snap = snapshot;
    int others = load.runningRequests() + load.waitingRequests()
        - (snap.load() == load ? snap.own() : own);
    return own > 0 && others > 0 ? held + held * others / own : held;
  }

  /**
   * Records the engine load a decision reads: a new snapshot remembers this router's in-flight
   * requests, which its counts include; the requests this router sends after it add to them.
   */
  void observeLoad(ReplicaLoad load) {
    if (snapshot.load() != load) {
      snapshot = new Snapshot(load, inFlightRequests());
    }
  }

  void learnDecodeRate(double tokensPerSecond) {
    decodeTokensPerSecondPerSequence.add(tokensPerSecond);
  }

  @Override
  public String toString() {
    return id + "#" + ordinal + "{inFlight=" + inFlightRequests.get() + ", tokens="
        + inFlightTokens.get() + ", prefill=" + pendingPrefillTokens.get() + ", decode="
        + pendingDecodeTokens.get() + '}';
  }
}
