package io.affinityrouter.core;

/**
 * Which sessions a benchmark's traffic brings (see {@link SessionWorkload}). Public only because
 * JMH's generated code reads {@code @Param} values of this type.
 */
public enum Traffic {
  /** Known sessions with known prompts. */
  RETURNING,
  /** A new session and a new conversation tail on a known shared prefix, every time. */
  NEW,
  /** The returning prompts without a session id: no binding store call, no pinning. */
  SESSIONLESS,
  /**
   * A new session whose whole prompt is new, every time: no replica holds any of it, so the
   * cold-prompt placement runs (the near-equal replica whose KV cache lives longest).
   */
  COLD;

  /** Whether every operation is a session the store has never seen. */
  boolean fresh() {
    return this == NEW || this == COLD;
  }
}
