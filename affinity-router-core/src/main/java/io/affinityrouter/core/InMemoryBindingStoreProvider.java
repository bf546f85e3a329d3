package io.affinityrouter.core;

import io.affinityrouter.spi.BindingStore;
import io.affinityrouter.spi.BindingStoreProvider;
import java.util.Map;

/**
 * The {@code "memory"} {@link BindingStoreProvider}: an {@link InMemoryBindingStore}. Properties:
 * {@code maximum-size} (default {@value InMemoryBindingStore#DEFAULT_MAXIMUM_SIZE}). Unknown
 * properties are refused, so a typo does not pass silently.
 */
public final class InMemoryBindingStoreProvider implements BindingStoreProvider {
  /** This provider's name: {@value}. */
  public static final String NAME = "memory";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int priority() {
    return 5;
  }

  @Override
  public boolean isAvailable() {
    return true;
  }

  @Override
  public BindingStore create(Map<String, String> properties) {
    InMemoryBindingStore.Builder b = InMemoryBindingStore.builder();
    for (Map.Entry<String, String> e : properties.entrySet()) {
      if (e.getKey().equals("maximum-size")) {
        try {
          b.maximumSize(Long.parseLong(e.getValue().trim()));
        } catch (NumberFormatException ex) {
          throw new IllegalArgumentException(
              "maximum-size: " + e.getValue() + " (expected: a positive integer)", ex);
        }
      } else {
        throw new IllegalArgumentException(
            "property: " + e.getKey() + " (expected: one of [maximum-size])");
      }
    }
    return b.build();
  }
}
