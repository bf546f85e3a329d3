package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.core.InMemoryBindingStore;
import io.affinityrouter.spi.BindingStore;

/**
 * The two-gateway contract with both gateways' routers sharing one in-memory binding store in this
 * JVM (what a single-process deployment with several listeners would do).
 */
class SharedMemoryStoreGatewaysTest extends TwoGatewaysContract {
  private final BindingStore store = InMemoryBindingStore.builder().build();

  @Override
  Gateway startGateway(TestFleet fleet) {
    return fleet.gateway(fleet.config(), store);
  }
}
