package io.affinityrouter.core.load;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One router's own view of the work it has committed to one replica: in-flight requests, committed
 * tokens (prompt plus expected output, the unit of the token limit), prompt tokens still to prefill
 * and the expected decode tokens of open leases; plus a per-sequence decode rate learned from
 * completed leases.
 *
 * <p>Admission is atomic against both limits: {@link #tryAcquire} never lets the request count or
 * the token count exceed its limit, whatever the concurrency (a request that fails the token check
 * briefly holds a request slot, which can only make a racing admission fail, never overshoot).
 * Counters never go negative: every release is matched by exactly one acquire, which
 * {@link Lease} guarantees. Thread-safe.
 */
public final class ReplicaState {
  private final String id;
  private final int ordinal;
  private final long idHash;
  private final AtomicInteger inFlightRequests = new AtomicInteger();
  private final AtomicLong inFlightTokens = new AtomicLong();
  private final AtomicLong pendingPrefillTokens = new AtomicLong();
  private final AtomicLong pendingDecodeTokens = new AtomicLong();
  private final Ewma decodeTokensPerSecondPerSequence;

  ReplicaState(String id, int ordinal, double decodeRatePrior) {
    this.id = id;
    this.ordinal = ordinal;
    this.idHash = io.affinityrouter.core.pick.Rendezvous.idHash(id);
    this.decodeTokensPerSecondPerSequence = new Ewma(0.1, decodeRatePrior);
  }

  /** The replica's id. */
  public String id() {
    return id;
  }

  /** The replica's small-integer ordinal in the router (its key in the prefix index). */
  public int ordinal() {
    return ordinal;
  }

  /** A 64-bit hash of the id, for rendezvous hashing. */
  public long idHash() {
    return idHash;
  }

  /** Requests this router has in flight on the replica. */
  public int inFlightRequests() {
    return inFlightRequests.get();
  }

  /** Tokens (prompt + expected output) this router has in flight on the replica. */
  public long inFlightTokens() {
    return inFlightTokens.get();
  }

  /** Uncached prompt tokens of in-flight requests whose first token has not arrived. */
  public long pendingPrefillTokens() {
    return pendingPrefillTokens.get();
  }

  /** Expected output tokens of in-flight requests. */
  public long pendingDecodeTokens() {
    return pendingDecodeTokens.get();
  }

  /** The learned decode rate of one sequence, output tokens per second. */
  public double decodeTokensPerSecondPerSequence() {
    return decodeTokensPerSecondPerSequence.get();
  }

  /** Whether one more request of {@code tokens} tokens fits within the limits now. */
  public boolean fits(int maxRequests, long maxTokens, long tokens) {
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
  public boolean tryAcquire(int maxRequests, long maxTokens, long tokens) {
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
  public void cancelAcquire(long tokens) {
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
