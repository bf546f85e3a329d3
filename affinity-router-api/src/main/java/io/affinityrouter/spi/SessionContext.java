package io.affinityrouter.spi;

/**
 * What a session's last routed turn left cached on its replica, as its binding carries it: who
 * routed it, its prompt and output tokens, the chained hash of the prompt's deepest full block (so
 * a reader can check that a new prompt extends that one before crediting its cache), and how long
 * ago it was routed. A router that did not route the last turn credits the bound replica with this
 * context, aged by that replica's cache lifetime; its own prefix index knows only what it sent.
 *
 * <p>Written by {@link BindingStore#getOrClaim(BindingKey, String, java.time.Duration,
 * SessionContext)} and {@link BindingStore#repin(BindingKey, long, String, java.time.Duration,
 * SessionContext)} in the same atomic operation as the binding (with {@code ageMillis} 0: the
 * store stamps the time on its own clock), and returned by the next call as
 * {@link Binding#context()}. Holds no prompt text: token counts and one hash. Immutable value.
 *
 * @param writer the routing router's id (any stable {@code long} unique among the routers sharing
 *     the store; {@code 0} is reserved)
 * @param promptTokens the turn's prompt tokens, {@code >= 0}
 * @param outputTokens the turn's expected output tokens, {@code >= 0}
 * @param anchorBlocks how many full blocks of the prompt the anchor covers, {@code >= 0} (0: the
 *     prompt had no full block, and the anchor is 0)
 * @param anchorHash the chained hash of block {@code anchorBlocks - 1} of the prompt, as the
 *     router's block hasher computes it
 * @param ageMillis how long ago the turn was routed, by the store's clock, {@code >= 0}
 */
public record SessionContext(long writer, int promptTokens, int outputTokens, int anchorBlocks,
    long anchorHash, long ageMillis) {
  /** Checks the components. */
  public SessionContext {
    if (writer == 0) {
      throw new IllegalArgumentException("writer: 0 (expected: a non-zero router id)");
    }
    if (promptTokens < 0) {
      throw new IllegalArgumentException("promptTokens: " + promptTokens + " (expected: >= 0)");
    }
    if (outputTokens < 0) {
      throw new IllegalArgumentException("outputTokens: " + outputTokens + " (expected: >= 0)");
    }
    if (anchorBlocks < 0) {
      throw new IllegalArgumentException("anchorBlocks: " + anchorBlocks + " (expected: >= 0)");
    }
    if (anchorBlocks == 0 && anchorHash != 0) {
      throw new IllegalArgumentException(
          "anchorHash: " + anchorHash + " with anchorBlocks 0 (expected: 0)");
    }
    if (ageMillis < 0) {
      throw new IllegalArgumentException("ageMillis: " + ageMillis + " (expected: >= 0)");
    }
  }

  /** A turn being routed now ({@code ageMillis} 0), as a router writes it. */
  public SessionContext(long writer, int promptTokens, int outputTokens, int anchorBlocks,
      long anchorHash) {
    this(writer, promptTokens, outputTokens, anchorBlocks, anchorHash, 0);
  }

  /** This context as read back {@code ageMillis} after it was written (clamped at 0). */
  public SessionContext aged(long ageMillis) {
    return new SessionContext(writer, promptTokens, outputTokens, anchorBlocks, anchorHash,
        Math.max(0, ageMillis));
  }
}
