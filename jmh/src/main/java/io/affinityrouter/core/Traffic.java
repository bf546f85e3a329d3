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
  SESSIONLESS
}
