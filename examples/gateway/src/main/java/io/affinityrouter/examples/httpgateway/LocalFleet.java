package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.examples.cli.Flags;
import io.affinityrouter.examples.fakevllm.FakeVllmConfig;
import io.affinityrouter.examples.fakevllm.FakeVllmServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/**
 * Starts fake vLLM backends and one gateway on 127.0.0.1 in this JVM and prints how to call it;
 * with {@code --load}, also runs the {@link LoadDriver} against it, prints per-backend hit rates
 * and exits.
 *
 * <p>Run ({@code examples/gateway/run-local.sh} does this): {@code mvn -B -ntp -q -pl
 * examples/gateway exec:java -Dexec.args="[--backends 3] [--backend-port 8001] [--port 8080]
 * [--latency-scale 1.0] [--redis redis://127.0.0.1:6379] [--load]"}.
 */
public final class LocalFleet {
  private LocalFleet() {}

  /**
   * Entry point.
   *
   * @throws IllegalArgumentException for bad flags
   */
  public static void main(String[] args) throws Exception {
    Flags f = Flags.parse(args, Set.of("backends", "backend-port", "port", "latency-scale",
        "redis", "model"), Set.of("load"));
    int n = f.integer("backends", 3);
    if (n <= 0) {
      throw new IllegalArgumentException("--backends: " + n + " (expected: > 0)");
    }
    int backendPort = f.integer("backend-port", 8001);
    String model = f.string("model", FakeVllmConfig.DEFAULT_MODEL);
    FakeVllmConfig config = FakeVllmConfig.builder().model(model)
        .latencyScale(f.number("latency-scale", 1)).build();
    List<FakeVllmServer> backends = new ArrayList<>();
    GatewayConfig.Builder gc = GatewayConfig.builder()
        .listen(new InetSocketAddress("127.0.0.1", f.integer("port", 8080)));
    if (f.has("redis")) {
      gc.redisUri(f.string("redis", null));
    }
    List<String> backendFlags = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      FakeVllmServer s = FakeVllmServer.start(
          new InetSocketAddress("127.0.0.1", backendPort == 0 ? 0 : backendPort + i), config);
      backends.add(s);
      gc.backend("vllm-" + i, URI.create(s.baseUrl()));
      backendFlags.add("--backend");
      backendFlags.add("vllm-" + i + "=" + s.baseUrl());
      System.out.println("fake vLLM vllm-" + i + " at " + s.baseUrl() + " (model " + model + ")");
    }
    Gateway gateway = Gateway.start(gc.build());
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      gateway.close();
      backends.forEach(FakeVllmServer::close);
    }));
    String url = gateway.baseUrl();
    System.out.println("gateway at " + url);
    if (f.has("load")) {
      List<String> load = new ArrayList<>(List.of("--gateway", url, "--model", model));
      load.addAll(backendFlags);
      LoadDriver.run(load.toArray(new String[0]), System.out);
      gateway.close();
      backends.forEach(FakeVllmServer::close);
      return;
    }
    System.out.println();
    System.out.println("Try a session (run it twice: the second turn stays on the same replica):");
    System.out.println("  curl -si " + url + "/v1/chat/completions -H 'content-type: application/json'"
        + " -H 'x-session-id: demo-1' -d '{\"model\":\"" + model + "\",\"max_tokens\":8,"
        + "\"messages\":[{\"role\":\"user\",\"content\":\"Hello there\"}]}'");
    System.out.println("Streamed:");
    System.out.println("  curl -sN " + url + "/v1/chat/completions -H 'content-type: application/json'"
        + " -H 'x-session-id: demo-1' -d '{\"model\":\"" + model + "\",\"max_tokens\":8,"
        + "\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hello there\"}]}'");
    System.out.println("Backend metrics: curl -s " + backends.get(0).baseUrl() + "/metrics");
    System.out.println("Load: mvn -B -ntp -q -pl examples/gateway exec:java"
        + " -Dexec.mainClass=io.affinityrouter.examples.httpgateway.LoadDriver -Dexec.args=\"--gateway "
        + url + " " + String.join(" ", backendFlags) + "\"");
    System.out.println("Ctrl-C stops everything.");
    new CountDownLatch(1).await();
  }
}
