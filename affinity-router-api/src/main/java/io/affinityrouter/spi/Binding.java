package io.affinityrouter.spi;

import java.util.Objects;

/**
 * A session binding as a {@link BindingStore} operation left it: the replica the session is pinned
 * to, the binding's generation, and whether this very operation wrote it.
 *
 * <p>Generations order the writes of one key: every write (claim or repin) stores a generation
 * strictly greater than any the key had before, including bindings that since expired, so a gateway
 * holding an old generation can always tell that it is stale. Immutable value.
 *
 * @param replicaId the replica the session is pinned to
 * @param generation the binding's generation, {@code > 0}
 * @param written whether this operation wrote the binding (won the claim, or its repin applied)
 */
public record Binding(String replicaId, long generation, boolean written) {
  /** Checks the components. */
  public Binding {
    Objects.requireNonNull(replicaId, "replicaId");
    if (generation <= 0) {
      throw new IllegalArgumentException("generation: " + generation + " (expected: > 0)");
    }
  }
}
