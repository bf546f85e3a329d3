package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;

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
    long deadline = System.nanoTime() + 30_000_000_000L; // generous: busy CI machines
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

  /**
   * Waits until each gateway subscribes for the model its scrapes show (a later scrape would
   * resubscribe) and has applied every batch each backend published (a warm-up prompt, sent
   * straight to a backend that published none, gives each subscription one to carry).
   */
  void awaitAllEventsApplied(ChatClient client, Gateway... gateways) throws Exception {
    assertThat(await(() -> java.util.Arrays.stream(gateways).allMatch(g ->
        g.replicas().stream().allMatch(r -> r.models().containsKey(MODEL)))))
        .as("every backend's model scraped").isTrue();
    long[] lastNudge = {System.nanoTime() - Duration.ofSeconds(1).toNanos()};
    boolean applied = await(() -> {
      // a batch published before a subscriber connected is lost; the next one starts a replay
      boolean nudge = System.nanoTime() - lastNudge[0] >= Duration.ofMillis(500).toNanos();
      if (nudge) {
        lastNudge[0] = System.nanoTime();
      }
      for (int i = 0; i < backends.size(); i++) {
        FakeVllmServer s = backends.get(i);
        for (Gateway g : gateways) {
          var stats = g.kvEventStats().get(id(i));
          if (s.kvEventBatchesPublished() == 0
              || (nudge && (stats == null || stats.batches() < s.kvEventBatchesPublished()))) {
            try {
              client.post(s.baseUrl(), "/v1/chat/completions", null,
                  "{\"model\":\"" + MODEL + "\",\"max_tokens\":1,\"messages\":[{\"role\":"
                      + "\"user\",\"content\":\"w" + System.nanoTime() + " " + "x ".repeat(80)
                      + "\"}]}");
            } catch (Exception e) {
              throw new IllegalStateException(e);
            }
          }
          stats = g.kvEventStats().get(id(i));
          if (stats == null || stats.batches() < s.kvEventBatchesPublished()) {
            return false;
          }
        }
      }
      return true;
    });
    assertThat(applied).as("every published batch applied").isTrue();
  }
}
