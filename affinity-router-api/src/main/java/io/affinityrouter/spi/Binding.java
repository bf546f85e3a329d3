package io.affinityrouter.spi;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

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
 * @param context the session's last routed turn as the previous write stored it, or {@code null}:
 *     when there is none (a new binding, a binding written without one, a store that keeps none,
 *     an answer from a local cache), or when that write's {@link SessionContext#writer()} is the
 *     caller's own (it knows what it routed)
 */
public record Binding(String replicaId, long generation, boolean written,
    @Nullable SessionContext context) {
  /** Checks the components. */
  public Binding {
    Objects.requireNonNull(replicaId, "replicaId");
    if (generation <= 0) {
      throw new IllegalArgumentException("generation: " + generation + " (expected: > 0)");
    }
  }

  /** A binding that carries no session context. */
  public Binding(String replicaId, long generation, boolean written) {
    this(replicaId, generation, written, null);
  }
}
