package io.affinityrouter.examples.gateway.replica;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.spi.ReplicaEndpoint;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;

class ServiceInstanceDiscoveryTest {
  private static ServiceInstance instance(String id, int port, Map<String, String> metadata) {
    return new DefaultServiceInstance(id, "vllm", "127.0.0.1", port, false, metadata);
  }

  /** A discovery client answering what the test sets. */
  static final class Registry implements DiscoveryClient {
    final AtomicReference<List<ServiceInstance>> instances = new AtomicReference<>(List.of());

    @Override
    public String description() {
      return "test";
    }

    @Override
    public List<ServiceInstance> getInstances(String serviceId) {
      return serviceId.equals("vllm") ? instances.get() : List.of();
    }

    @Override
    public List<String> getServices() {
      return List.of("vllm");
    }
  }

  @Test
  void listedInstancesArePushedOnlyWhenTheyChange() throws Exception {
    ServiceInstanceDiscovery d = new ServiceInstanceDiscovery(null, List.of());
    List<List<ReplicaEndpoint>> pushed = new CopyOnWriteArrayList<>();
    AutoCloseable watch = d.watch(pushed::add);
    List<ServiceInstance> two = List.of(instance("a", 8001, Map.of()),
        instance(null, 8002, Map.of()));
    d.listed("vllm", two);
    d.listed("vllm", two);
    assertThat(pushed).hasSize(1);
    assertThat(pushed.get(0)).extracting(ReplicaEndpoint::id)
        .containsExactly("a", "127.0.0.1:8002");
    d.listed("vllm", List.of(instance("a", 8003, Map.of())));
    assertThat(pushed).hasSize(2);
    assertThat(pushed.get(1)).singleElement().extracting(ReplicaEndpoint::baseUri)
        .isEqualTo(URI.create("http://127.0.0.1:8003"));
    assertThat(d.endpoints()).isEqualTo(pushed.get(1));
    watch.close();
    d.listed("vllm", two);
    assertThat(pushed).hasSize(2);
  }

  @Test
  void configuredServicesArePolledFromTheDiscoveryClient() {
    Registry registry = new Registry();
    ServiceInstanceDiscovery d = new ServiceInstanceDiscovery(registry, List.of("vllm"));
    assertThat(d.endpoints()).isEmpty();
    registry.instances.set(List.of(instance("a", 8001, Map.of("engine", "sglang",
        "models", "m1, m2", "kv-events", "tcp://127.0.0.1:5557", "kv-events-replay", "tcp://127.0.0.1:5558",
        "kv-events-dp-ranks", "2"))));
    ReplicaEndpoint e = d.endpoints().get(0);
    assertThat(e.engine()).isEqualTo(ReplicaEndpoint.Engine.SGLANG);
    assertThat(e.models()).containsExactly("m1", "m2");
    assertThat(e.kvEventsUri()).contains(URI.create("tcp://127.0.0.1:5557"));
    assertThat(e.kvEventsReplayUri()).contains(URI.create("tcp://127.0.0.1:5558"));
    assertThat(e.dataParallelRanks()).isEqualTo(2);
    registry.instances.set(List.of(instance("b", 8002, Map.of("kv-events-dp-ranks", "x"))));
    assertThat(d.endpoints()).as("bad metadata is left out, not the instance")
        .extracting(ReplicaEndpoint::id).containsExactly("b");
  }
}
