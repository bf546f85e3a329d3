package io.affinityrouter.spi;

import java.util.Objects;

/**
 * The key of a session binding: the session id namespaced by model and tenant, so the same id used
 * by two tenants, or for two models, are two bindings. Empty strings stand for "no model" and "no
 * tenant". Immutable value.
 *
 * @param model the request's model, or {@code ""}
 * @param tenant the request's tenant, or {@code ""}
 * @param sessionId the caller's session id (at most 256 UTF-8 bytes, checked by the request)
 */
public record BindingKey(String model, String tenant, String sessionId) {
  /** Checks the components. */
  public BindingKey {
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(tenant, "tenant");
    Objects.requireNonNull(sessionId, "sessionId");
    if (sessionId.isBlank()) {
      throw new IllegalArgumentException("sessionId: blank (expected: a non-blank string)");
    }
  }
}
