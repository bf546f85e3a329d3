package io.affinityrouter.core;

import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.BindingStoreProvider;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * The registry of {@link BindingStoreProvider}s found with {@link ServiceLoader} (as gRPC's
 * {@code LoadBalancerRegistry}): {@link #create} picks, among available providers of a name, the one
 * of highest priority. A provider whose class cannot load is skipped, never fatal. Thread-safe.
 */
final class BindingStores {
  private BindingStores() {}

  /** The available providers on the class path, highest priority first. */
  static List<BindingStoreProvider> providers(ClassLoader loader) {
    List<BindingStoreProvider> found = new ArrayList<>();
    var it = ServiceLoader.load(BindingStoreProvider.class, loader).iterator();
    while (true) {
      try {
        if (!it.hasNext()) {
          break;
        }
        BindingStoreProvider p = it.next();
        if (p.isAvailable()) {
          found.add(p);
        }
      } catch (ServiceConfigurationError e) {
        // A provider that cannot be loaded (missing dependency) is skipped.
      }
    }
    found.sort(Comparator.comparingInt(BindingStoreProvider::priority).reversed());
    return found;
  }

  /**
   * Creates a store with the highest-priority available provider named {@code name}.
   *
   * @throws IllegalArgumentException if no available provider has that name, or the properties are
   *     invalid for it
   */
  static BindingStore create(String name, Map<String, String> properties) {
    List<String> names = new ArrayList<>();
    for (BindingStoreProvider p : providers(BindingStores.class.getClassLoader())) {
      if (p.name().equals(name)) {
        return p.create(Map.copyOf(properties));
      }
      names.add(p.name());
    }
    throw new IllegalArgumentException(
        "bindingStore: " + name + " (expected: one of the available providers " + names + ")");
  }
}
