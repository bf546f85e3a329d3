package io.affinityrouter.examples.gateway.fake;

import java.util.ArrayList;
import java.util.List;

/**
 * Starts three {@link FakeVllmBackend}s on ports 8001–8003 (the URIs in the example's
 * {@code application.yml}) and runs until killed, so the gateway can be tried without GPUs:
 *
 * <pre>{@code
 * mvn -pl examples/spring-cloud-gateway exec:java -Dexec.classpathScope=test \
 *     -Dexec.mainClass=io.affinityrouter.examples.gateway.fake.FakeVllmFleet
 * }</pre>
 */
public final class FakeVllmFleet {
  private FakeVllmFleet() {}

  /** Starts the fleet; optional argument: the model name (default {@code llama-3-8b}). */
  public static void main(String[] args) throws Exception {
    String model = args.length > 0 ? args[0] : "llama-3-8b";
    List<FakeVllmBackend> fleet = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      fleet.add(new FakeVllmBackend("backend-" + i, model, 8000 + i));
    }
    System.out.println("fake vLLM fleet serving " + model + ": " + fleet);
    Thread.currentThread().join();
  }
}
