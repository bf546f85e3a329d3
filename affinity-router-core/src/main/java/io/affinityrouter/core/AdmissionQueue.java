package io.affinityrouter.core;

import io.affinityrouter.Replica;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import java.util.Objects;

/**
 * Requests held at the gateway until the fleet has room for them: bounded in count and in bytes,
 * fair across tenants by tokens (deficit round-robin), first in first out within a tenant with its
 * first sends ahead of its resends of new work ({@link RoutingRequest#retries()}: a request refused
 * before has spent its latency budget waiting, one sent now can still meet it), each with a
 * deadline after which it is refused as {@link RoutingReason#ALL_AT_LIMIT}.
 *
 * <p>Released by events, never by polling: {@link #signal()} (a lease closed or saw its first token,
 * the gateway refreshed the replicas' loads) offers the tenants' heads again, in DRR order, through
 * the {@link Offer}; a head that must still wait goes back where it was. One scheduled task, armed
 * at the earliest deadline among the heads, refuses what expired. A held request ends exactly once:
 * admitted, refused, or cancelled by its caller (cancelling the future removes it); an admission
 * that loses that race closes its lease. No thread waits for a held request. Thread-safe: the
 * structure is guarded by one lock, never held while routing or completing a future.
 */
final class AdmissionQueue {
  /** Tokens a tenant earns per round of the deficit round-robin: one long prompt. */
  static final long QUANTUM_TOKENS = 16_384;
  /** The bytes a held request is counted for besides its prompt's hashes. */
  static final long ENTRY_OVERHEAD_BYTES = 256;

  /** Routes a held request again. */
  interface Offer {
    /**
     * The request's decision now, or {@link DefaultRouter#HELD} if it must wait still. May
     * complete later (the binding store answers), never exceptionally.
     */
    CompletionStage<RoutingDecision> offer(Held held);
  }

  /** One held request. */
  static final class Held {
    final RoutingRequest request;
    final List<Replica> replicas;
    final String tenant;
    final long tokens;
    final long bytes;
    final long startNanos;
    final long deadlineMillis;
    final boolean resend;
    final CompletableFuture<RoutingDecision> future = new CompletableFuture<>();
    @Nullable Snapshot before; // the DRR state its offer started from; guarded by the queue's lock

    Held(RoutingRequest request, List<Replica> replicas, long tokens, long startNanos,
        long deadlineMillis, boolean returning) {
      this.request = request;
      this.replicas = replicas;
      this.tenant = request.tenant().orElse("");
      this.tokens = Math.max(1, tokens);
      this.bytes = ENTRY_OVERHEAD_BYTES + 8L * request.promptBlockHashes().length;
      this.startNanos = startNanos;
      this.deadlineMillis = deadlineMillis;
      // a returning turn's resend keeps its place: its session's context waits on its replica
      this.resend = request.retries() > 0 && !returning;
    }
  }

  /**
   * The round-robin's order and deficits before an offer: restored if the fleet had no room for
   * it, so that probing a full fleet never advances anyone's turn.
   */
  private record Snapshot(Tenant[] order, long[] deficits, boolean[] turns, long version) {}

  /** A tenant's FIFOs (first sends, then resends) and its deficit. Guarded by the queue's lock. */
  private static final class Tenant {
    final String name;
    final ArrayDeque<Held> firsts = new ArrayDeque<>();
    final ArrayDeque<Held> resends = new ArrayDeque<>();
    long deficit;
    boolean turn; // its turn has begun (it earned this round's quantum) and not ended yet
    boolean inRing; // has held requests, or one being offered
    boolean offering; // one of its requests is being offered: FIFO within the tenant holds
    long skippedPass; // the drain pass in which its head had to wait still

    Tenant(String name) {
      this.name = name;
    }

    @Nullable Held head() {
      Held h = firsts.peekFirst();
      return h != null ? h : resends.peekFirst();
    }

    Held pollHead() {
      return firsts.isEmpty() ? resends.pollFirst() : firsts.pollFirst();
    }

    boolean isEmpty() {
      return firsts.isEmpty() && resends.isEmpty();
    }

    void addLast(Held h) {
      (h.resend ? resends : firsts).addLast(h);
    }

    void addFirst(Held h) {
      (h.resend ? resends : firsts).addFirst(h);
    }

    boolean remove(Held h) {
      return (h.resend ? resends : firsts).remove(h);
    }

    /** The earliest deadline among its held requests: one of the two heads'. */
    long earliestDeadline() {
      Held f = firsts.peekFirst();
      Held r = resends.peekFirst();
      return Math.min(f == null ? Long.MAX_VALUE : f.deadlineMillis,
          r == null ? Long.MAX_VALUE : r.deadlineMillis);
    }

    /** Takes off every held request whose deadline is at or before {@code now}. */
    void expireInto(long now, List<Held> expired) {
      for (ArrayDeque<Held> q : List.of(firsts, resends)) {
        while (!q.isEmpty() && q.peekFirst().deadlineMillis <= now) {
          expired.add(q.pollFirst());
        }
      }
    }
  }

  private final int maxRequests;
  private final long maxBytes;
  private final long maxWaitMillis;
  private final Duration retryAfter;
  private final InstantSource clock;
  private final Supplier<ScheduledExecutorService> scheduler;
  private final Listeners listeners;
  private volatile @Nullable Offer offer; // set once, right after construction

  private final ReentrantLock lock = new ReentrantLock();
  private final Map<String, Tenant> tenants = new HashMap<>();
  private final ArrayDeque<Tenant> ring = new ArrayDeque<>(); // tenants with held requests
  private long bytes;
  private long pass;
  private long version; // changes with every change of the structure
  private @Nullable ScheduledFuture<?> timer;
  private long timerAtMillis = Long.MAX_VALUE;
  private boolean closed;
  private volatile int count; // read without the lock: the empty check of every select
  private final AtomicInteger wip = new AtomicInteger();

  AdmissionQueue(int maxRequests, long maxBytes, Duration maxWait, Duration retryAfter,
      InstantSource clock, Supplier<ScheduledExecutorService> scheduler, Listeners listeners) {
    this.maxRequests = maxRequests;
    this.maxBytes = maxBytes;
    this.maxWaitMillis = Math.max(1, maxWait.toMillis());
    this.retryAfter = retryAfter;
    this.clock = clock;
    this.scheduler = scheduler;
    this.listeners = listeners;
  }

  /** Sets how held requests are routed again (the router, once built). */
  void offerWith(Offer offer) {
    this.offer = offer;
  }

  /** Whether nothing is held: one volatile read. */
  boolean isEmpty() {
    return count == 0;
  }

  /** Requests held now. */
  int size() {
    return count;
  }

  /** Bytes the held requests are counted for now. */
  long bytes() {
    lock.lock();
    try {
      return bytes;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Holds {@code request} (its prompt already reduced to hashes), behind what its tenant holds;
   * refused at once if the queue is full. A resend of new work ({@code returning} false) waits
   * behind the tenant's first sends; a returning turn's, in arrival order with them.
   */
  CompletionStage<RoutingDecision> hold(RoutingRequest request, List<Replica> replicas,
      long tokens, long startNanos, boolean returning) {
    Held h = new Held(request, replicas, tokens, startNanos, clock.millis() + maxWaitMillis,
        returning);
    boolean accepted;
    lock.lock();
    try {
      accepted = !closed && count < maxRequests && bytes + h.bytes <= maxBytes;
      if (accepted) {
        Tenant t = tenants.computeIfAbsent(h.tenant, Tenant::new);
        if (!t.inRing) {
          t.inRing = true;
          ring.addLast(t);
        }
        t.addLast(h);
        bytes += h.bytes;
        count++;
        version++;
        armLocked();
      }
    } finally {
      lock.unlock();
    }
    if (!accepted) {
      refuse(h);
      return h.future;
    }
    h.future.whenComplete((d, ex) -> {
      if (h.future.isCancelled()) {
        remove(h);
      }
    });
    signal();
    return h.future;
  }

  /**
   * Offers the tenants' heads again, in DRR order, until each has had its turn once without being
   * admitted. Runs on the calling thread; a signal during a drain makes that drain go round again.
   */
  void signal() {
    if (count == 0 || wip.getAndIncrement() != 0) {
      return;
    }
    int missed = 1;
    do {
      try {
        drain();
      } catch (RuntimeException e) { // never leave the drain marked as running
        listeners.pluginFailure("admission", e);
      }
      missed = wip.addAndGet(-missed);
    } while (missed != 0);
  }

  private void drain() {
    long thisPass;
    lock.lock();
    try {
      thisPass = ++pass;
    } finally {
      lock.unlock();
    }
    Held h;
    while ((h = next(thisPass)) != null) {
      CompletionStage<RoutingDecision> answer;
      try {
        answer = Objects.requireNonNull(offer, "offerWith").offer(h);
      } catch (RuntimeException e) { // a programmer error: refuse rather than hold it forever
        listeners.pluginFailure("admission", e);
        answer = CompletableFuture.completedFuture(refusal());
      }
      CompletableFuture<RoutingDecision> f = answer.toCompletableFuture();
      if (!f.isDone()) {
        Held held = h;
        f.whenComplete((d, ex) -> {
          settle(held, d, ex, thisPass);
          signal();
        });
        continue;
      }
      RoutingDecision d = null;
      Throwable ex = null;
      try {
        d = f.join();
      } catch (RuntimeException e) {
        ex = e;
      }
      settle(h, d, ex, thisPass);
    }
  }

  /**
   * The next head to offer in this pass, taken off its tenant's queue; null when none. Classic
   * deficit round-robin: the tenant at the ring's head has the turn; it earns one quantum when its
   * turn begins and is served while its deficit covers its head; then the turn passes on. Tenants
   * that are being offered or had to wait in this pass are stepped over, keeping their turn.
   */
  private @Nullable Held next(long thisPass) {
    lock.lock();
    try {
      int ready = 0;
      for (Tenant t : ring) {
        if (ready(t, thisPass)) {
          ready++;
        }
      }
      if (ready == 0) {
        return null;
      }
      Snapshot before = snapshotLocked();
      while (true) {
        for (int i = 0, n = ring.size(); i < n; i++) {
          Tenant t = ring.peekFirst();
          if (!ready(t, thisPass)) {
            ring.addLast(ring.pollFirst());
            continue;
          }
          if (!t.turn) {
            t.turn = true;
            t.deficit += QUANTUM_TOKENS;
          }
          Held head = Objects.requireNonNull(t.head(), "ready");
          if (t.deficit >= head.tokens) {
            t.deficit -= head.tokens;
            t.pollHead();
            t.offering = true;
            head.before = before;
            return head;
          }
          t.turn = false;
          ring.addLast(ring.pollFirst());
        }
        // A whole round and nobody could afford its head: skip the rounds that would serve no one
        // either, giving every ready tenant their quanta at once.
        long minShort = Long.MAX_VALUE;
        for (Tenant t : ring) {
          if (ready(t, thisPass)) {
            minShort = Math.min(minShort,
                Objects.requireNonNull(t.head(), "ready").tokens - t.deficit);
          }
        }
        long rounds = (minShort - 1) / QUANTUM_TOKENS;
        if (rounds > 0) {
          for (Tenant t : ring) {
            if (ready(t, thisPass)) {
              t.deficit += rounds * QUANTUM_TOKENS;
            }
          }
        }
      }
    } finally {
      lock.unlock();
    }
  }

  private static boolean ready(Tenant t, long thisPass) {
    return !t.offering && t.skippedPass != thisPass && !t.isEmpty();
  }

  private Snapshot snapshotLocked() {
    Tenant[] order = ring.toArray(new Tenant[0]);
    long[] deficits = new long[order.length];
    boolean[] turns = new boolean[order.length];
    for (int i = 0; i < order.length; i++) {
      deficits[i] = order[i].deficit;
      turns[i] = order[i].turn;
    }
    return new Snapshot(order, deficits, turns, ++version);
  }

  /** Removes a tenant with nothing held and nothing being offered; its deficit is forgotten. */
  private void leaveLocked(Tenant t) {
    ring.remove(t);
    forgetLocked(t);
  }

  /** Forgets a tenant already out of the ring. */
  private void forgetLocked(Tenant t) {
    t.inRing = false;
    t.turn = false;
    t.deficit = 0;
    tenants.remove(t.name);
  }

  /** What became of an offered request: admitted, refused, or back at its tenant's head. */
  private void settle(Held h, @Nullable RoutingDecision d, @Nullable Throwable ex,
      long thisPass) {
    if (ex != null) {
      listeners.pluginFailure("admission", ex);
      d = refusal();
    }
    boolean held = d == DefaultRouter.HELD;
    boolean requeued = false;
    lock.lock();
    try {
      Tenant t = closed ? null : tenants.get(h.tenant);
      if (t != null) { // else closed meanwhile, and no longer counted
        t.offering = false;
        if (held && !h.future.isDone() && h.deadlineMillis > clock.millis()) {
          t.addFirst(h);
          Snapshot before = h.before;
          if (before != null && before.version() == version) { // nothing else moved meanwhile
            ring.clear();
            for (int i = 0; i < before.order().length; i++) {
              Tenant o = before.order()[i];
              ring.addLast(o);
              o.deficit = before.deficits()[i];
              o.turn = before.turns()[i];
            }
          } else {
            t.deficit += h.tokens; // its place in the round stays as it is now
          }
          t.skippedPass = thisPass;
          requeued = true;
        } else {
          bytes -= h.bytes;
          count--;
          if (t.isEmpty()) {
            leaveLocked(t);
          }
        }
        h.before = null;
        version++;
        armLocked();
      }
    } finally {
      lock.unlock();
    }
    if (requeued) {
      return;
    }
    RoutingDecision outcome = held ? refusal() : Objects.requireNonNull(d, "no failure, no decision");
    if (!h.future.complete(outcome) && outcome.isRouted()) {
      outcome.lease().close(); // the caller went away (or the deadline passed) meanwhile
    } else if (held) {
      notifyRefused(h, outcome);
    }
  }

  /** Removes a cancelled request, unless it is being offered (the offer's end removes it then). */
  private void remove(Held h) {
    lock.lock();
    try {
      Tenant t = tenants.get(h.tenant);
      if (t != null && t.remove(h)) {
        bytes -= h.bytes;
        count--;
        version++;
        if (t.isEmpty() && !t.offering) {
          leaveLocked(t);
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /** Arms the deadline task at the earliest head's deadline, if not armed earlier already. */
  private void armLocked() {
    long earliest = Long.MAX_VALUE;
    for (Tenant t : ring) {
      earliest = Math.min(earliest, t.earliestDeadline());
    }
    if (earliest == Long.MAX_VALUE || earliest >= timerAtMillis || closed) {
      return;
    }
    if (timer != null) {
      timer.cancel(false);
    }
    timerAtMillis = earliest;
    long delay = Math.max(0, earliest - clock.millis());
    try {
      timer = scheduler.get().schedule(this::expire, delay, TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) { // the scheduler was shut down: nothing expires
      listeners.pluginFailure("admission scheduler", e);
      timer = null;
      timerAtMillis = Long.MAX_VALUE;
    }
  }

  /** Refuses every held request whose deadline has passed; re-arms for the next one. */
  private void expire() {
    List<Held> expired = new ArrayList<>();
    lock.lock();
    try {
      timer = null;
      timerAtMillis = Long.MAX_VALUE;
      long now = clock.millis();
      for (var it = ring.iterator(); it.hasNext(); ) {
        Tenant t = it.next();
        int from = expired.size();
        t.expireInto(now, expired);
        for (int i = from; i < expired.size(); i++) {
          bytes -= expired.get(i).bytes;
          count--;
          version++;
        }
        if (t.isEmpty() && !t.offering) {
          it.remove();
          forgetLocked(t);
        }
      }
      armLocked();
    } finally {
      lock.unlock();
    }
    for (Held h : expired) {
      refuse(h);
    }
  }

  /** Refuses everything held and holds nothing more. */
  void close() {
    List<Held> all = new ArrayList<>();
    lock.lock();
    try {
      closed = true;
      for (Tenant t : ring) {
        all.addAll(t.firsts);
        all.addAll(t.resends);
        t.firsts.clear();
        t.resends.clear();
      }
      ring.clear();
      tenants.clear();
      bytes = 0;
      count = 0;
      if (timer != null) {
        timer.cancel(false);
        timer = null;
      }
    } finally {
      lock.unlock();
    }
    for (Held h : all) {
      refuse(h);
    }
  }

  private void refuse(Held h) {
    RoutingDecision d = refusal();
    if (h.future.complete(d)) {
      notifyRefused(h, d);
    }
  }

  private void notifyRefused(Held h, RoutingDecision d) {
    if (!listeners.isEmpty()) {
      listeners.decision(h.request, d, System.nanoTime() - h.startNanos);
    }
  }

  /** What a held request that cannot wait longer gets. */
  RoutingDecision refusal() {
    return RoutingDecision.notRouted(RoutingReason.ALL_AT_LIMIT, retryAfter);
  }
}
