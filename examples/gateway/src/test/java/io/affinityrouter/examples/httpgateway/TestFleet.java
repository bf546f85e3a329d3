package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.examples.fakevllm.FakeVllmConfig;
import io.affinityrouter.examples.fakevllm.FakeVllmServer;
import io.affinityrouter.spi.BindingStore;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

/** Fake backends and gateways on 127.0.0.1 ephemeral ports, for one test; closes them all. */
final class TestFleet implements AutoCloseable {
  static final String MODEL = "test-model";

  final List<FakeVllmServer> backends = new ArrayList<>();
  final List<Gateway> gateways = new ArrayList<>();

  static TestFleet start(int backends, FakeVllmConfig.Builder config) {
    TestFleet f = new TestFleet();
    for (int i = 0; i < backends; i++) {
      f.backends.add(FakeVllmServer.start(new InetSocketAddress("127.0.0.1", 0),
          config.model(MODEL).build()));
    }
    return f;
  }

  /** A configuration routing to every backend, ids {@code vllm-0...}, with fast scrapes. */
  GatewayConfig.Builder config() {
    GatewayConfig.Builder b = GatewayConfig.builder()
        .listen(new InetSocketAddress("127.0.0.1", 0))
        .scrapeInterval(Duration.ofMillis(20))
        .shutdownGrace(Duration.ofSeconds(5));
    for (int i = 0; i < backends.size(); i++) {
      b.backend(id(i), URI.create(backends.get(i).baseUrl()));
    }
    return b;
  }

  Gateway gateway(GatewayConfig.Builder config, BindingStore sharedStore) {
    Gateway g = Gateway.start(config.build(), sharedStore);
    gateways.add(g);
    return g;
  }

  static String id(int i) {
    return "vllm-" + i;
  }

  FakeVllmServer backend(String id) {
    return backends.get(Integer.parseInt(id.substring("vllm-".length())));
  }

  /** Waits up to 10 s for the condition; returns whether it held. */
  static boolean await(BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        return false;
      }
      Thread.sleep(5);
    }
    return true;
  }

  @Override
  public void close() {
    for (Gateway g : gateways) {
      g.shutdown(Duration.ofMillis(200));
    }
    for (FakeVllmServer b : backends) {
      b.close();
    }
  }
}
