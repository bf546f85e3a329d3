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
 * of highest priority. A provider whose class cannot load is skipped, never fatal, and logged; a
 * name no available provider has is refused with the providers that failed. Thread-safe.
 */
final class BindingStores {
  private BindingStores() {}

  private static final System.Logger LOG = System.getLogger(BindingStores.class.getName());

  /** The providers found, highest priority first, and those whose classes could not load. */
  record Scan(List<BindingStoreProvider> providers, List<ServiceConfigurationError> failures) {}

  /** The available providers on the class path, highest priority first. */
  static List<BindingStoreProvider> providers(ClassLoader loader) {
    return scan(loader).providers();
  }

  /** Scans the class path; each provider that fails to load is logged and skipped. */
  static Scan scan(ClassLoader loader) {
    List<BindingStoreProvider> found = new ArrayList<>();
    List<ServiceConfigurationError> failures = new ArrayList<>();
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
        // A provider that cannot be loaded (a missing dependency) is skipped, and said.
        failures.add(e);
        LOG.log(System.Logger.Level.WARNING, "a binding-store provider failed to load and is "
            + "skipped: " + e.getMessage(), e);
      }
    }
    found.sort(Comparator.comparingInt(BindingStoreProvider::priority).reversed());
    return new Scan(List.copyOf(found), List.copyOf(failures));
  }

  /**
   * Creates a store with the highest-priority available provider named {@code name}.
   *
   * @throws IllegalArgumentException if no available provider has that name (naming the providers
   *     that failed to load, their errors suppressed on it), or the properties are invalid for it
   */
  static BindingStore create(String name, Map<String, String> properties) {
    return create(name, properties, BindingStores.class.getClassLoader());
  }

  static BindingStore create(String name, Map<String, String> properties, ClassLoader loader) {
    Scan scan = scan(loader);
    List<String> names = new ArrayList<>();
    for (BindingStoreProvider p : scan.providers()) {
      if (p.name().equals(name)) {
        return p.create(Map.copyOf(properties));
      }
      names.add(p.name());
    }
    StringBuilder message = new StringBuilder("bindingStore: ").append(name)
        .append(" (expected: one of the available providers ").append(names);
    if (!scan.failures().isEmpty()) {
      message.append("; ").append(scan.failures().size())
          .append(" provider(s) failed to load, first: ")
          .append(scan.failures().get(0).getMessage());
    }
    IllegalArgumentException e = new IllegalArgumentException(message.append(')').toString());
    scan.failures().forEach(e::addSuppressed);
    throw e;
  }
}
