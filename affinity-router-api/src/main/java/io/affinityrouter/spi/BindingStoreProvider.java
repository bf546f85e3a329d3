package io.affinityrouter.spi;

import java.util.Map;

/**
 * Creates a {@link BindingStore} by name, found with {@link java.util.ServiceLoader} (as gRPC's
 * {@code LoadBalancerProvider}): list the implementation in
 * {@code META-INF/services/io.affinityrouter.spi.BindingStoreProvider}.
 *
 * <p>Discovery must not fail: a provider whose dependencies are missing returns {@code false} from
 * {@link #isAvailable()} rather than throwing. Among available providers of one name, the highest
 * {@link #priority()} wins. Implementations are stateless and thread-safe.
 */
public interface BindingStoreProvider {

  /** The store's name, e.g. {@code "memory"} or {@code "redis"}. */
  String name();

  /** Precedence among providers of the same name, 0..10; the default provider uses 5. */
  int priority();

  /** Whether this provider can create stores in this process (its dependencies are present). */
  boolean isAvailable();

  /**
   * Creates a store. The router that asked for it owns it and closes it.
   *
   * @param properties provider-specific settings (documented by each provider), never null
   * @throws IllegalArgumentException if a property is missing or invalid
   */
  BindingStore create(Map<String, String> properties);
}
