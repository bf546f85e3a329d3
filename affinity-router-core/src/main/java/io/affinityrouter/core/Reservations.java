package io.affinityrouter.core;

/**
 * The in-flight capacity one decision holds on replicas: every reservation is made here and ends
 * here exactly once, released (the request went elsewhere) or handed to the request's lease. At
 * most two are held at a time: the candidate, and the bound replica that may keep the session
 * instead. Reserving a replica twice, a third reservation, or ending one that is not held is a bug
 * and throws {@link IllegalStateException}. Not thread-safe; owned by one {@link Selection}.
 */
final class Reservations {
  private static final RateLimitedLog LOG = new RateLimitedLog(Reservations.class, 60);

  private int first = -1;
  private int second = -1;

  /**
   * Reserves the request's place on replica {@code i} of {@code sel} if its limits allow it.
   *
   * @return whether it did; a reservation must later be {@link #release released} or
   *     {@link #handOff handed off}
   */
  boolean reserve(Selection sel, int i, int maxRequests, long maxTokens) {
    if (holds(i)) {
      throw new IllegalStateException("replica " + i + ": reserved twice");
    }
    if (first >= 0 && second >= 0) {
      throw new IllegalStateException("replica " + i + ": a third reservation (held: " + first
          + ", " + second + ")");
    }
    if (!sel.states[i].tryAcquire(maxRequests, maxTokens, sel.requestTokens)) {
      return false;
    }
    if (first < 0) {
      first = i;
    } else {
      second = i;
    }
    return true;
  }

  /** Gives back the reservation on replica {@code i}: the request goes elsewhere, or nowhere. */
  void release(Selection sel, int i) {
    end(i, "released");
    sel.states[i].cancelAcquire(sel.requestTokens);
  }

  /** The request's lease takes over the reservation on replica {@code i}. */
  void handOff(int i) {
    end(i, "handed to a lease");
  }

  boolean holds(int i) {
    return i >= 0 && (first == i || second == i);
  }

  /** How many are held. */
  int held() {
    return (first >= 0 ? 1 : 0) + (second >= 0 ? 1 : 0);
  }

  /**
   * Releases what a decision that has ended still holds, which is a bug, logged: capacity must not
   * leak however the decision ended.
   */
  void releaseLeftovers(Selection sel) {
    if (first < 0 && second < 0) {
      return;
    }
    LOG.warn("a decision ended holding " + held() + " reservation(s); released",
        new IllegalStateException("unreleased reservation"));
    if (first >= 0) {
      release(sel, first);
    }
    if (second >= 0) {
      release(sel, second);
    }
  }

  /** Takes over what {@code from} holds, which then holds nothing (a decision moving threads). */
  void moveFrom(Reservations from) {
    first = from.first;
    second = from.second;
    from.clear();
  }

  /** Forgets every reservation, for a selection starting a new decision. */
  void clear() {
    first = -1;
    second = -1;
  }

  private void end(int i, String how) {
    if (first == i && i >= 0) {
      first = -1;
    } else if (second == i && i >= 0) {
      second = -1;
    } else {
      throw new IllegalStateException("replica " + i + ": " + how + " without a reservation");
    }
  }
}
