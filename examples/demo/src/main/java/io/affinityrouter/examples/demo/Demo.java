package io.affinityrouter.examples.demo;

import io.affinityrouter.ModelState;
import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.ReplicaLoad;
import io.affinityrouter.RequestLease;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.spi.RoutingListener;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Routes a few multi-turn chat sessions over four replicas on embedded defaults (in-memory binding
 * store, no Redis) and prints every decision's explanation: first turns claimed by load and
 * placement, later turns kept by affinity with their prefix cached, a repin when a replica fails, and
 * a wake request for a model that is asleep everywhere.
 *
 * <p>Run: {@code mvn -B -ntp -q install -DskipTests && mvn -B -ntp -q -pl examples/demo exec:java}
 */
public final class Demo {
  private Demo() {}

  /** Entry point. */
  public static void main(String[] args) {
    Random rnd = new Random(42);
    int[] systemPrompt = tokens(rnd, 1024); // shared by every session
    List<Replica> replicas = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      replicas.add(Replica.builder("vllm-" + i)
          .address("http://10.0.0." + (10 + i) + ":8000")
          .model("qwen2.5-7b", ModelState.ACTIVE)
          .model("llama-3.1-8b", ModelState.SLEEPING)
          .load(ReplicaLoad.builder().runningRequests(2 * i).kvUsage(0.1 * i)
              .kvCapacityTokens(1_082_544).build())
          .build());
    }
    try (Router router = AffinityRouter.builder()
        .addListener(new RoutingListener() {
          @Override
          public void onWakeRequested(Replica replica, String model) {
            System.out.println("  listener: wake " + model + " on " + replica.id());
          }
        })
        .build()) {
      List<int[]> contexts = new ArrayList<>();
      for (int s = 0; s < 3; s++) {
        contexts.add(systemPrompt);
      }
      for (int turn = 1; turn <= 4; turn++) {
        System.out.println("turn " + turn);
        if (turn == 3) {
          Replica failed = replicas.get(bound(router, replicas, contexts.get(0), "session-0"));
          replicas.set(replicas.indexOf(failed), failed.withHealth(ReplicaHealth.UNHEALTHY));
          System.out.println("  (" + failed.id() + " fails its health check)");
        }
        for (int s = 0; s < contexts.size(); s++) {
          int[] context = concat(contexts.get(s), tokens(rnd, 200 + rnd.nextInt(400)));
          RoutingDecision d = router.select(request("session-" + s, "qwen2.5-7b", context),
              replicas);
          System.out.println("  session-" + s + ": " + d.explain());
          if (d.isRouted()) {
            try (RequestLease lease = d.lease()) {
              lease.markFirstToken();
              int output = 100 + rnd.nextInt(200);
              lease.complete(output);
              contexts.set(s, concat(context, tokens(rnd, output)));
            }
          }
        }
      }
      System.out.println("a request for a model asleep on every replica:");
      RoutingDecision d = router.select(request("session-9", "llama-3.1-8b", systemPrompt),
          replicas);
      System.out.println("  session-9: " + d.explain());
    }
  }

  private static int bound(Router router, List<Replica> replicas, int[] context, String session) {
    RoutingDecision d = router.select(request(session, "qwen2.5-7b", context), replicas);
    d.lease().close();
    return replicas.indexOf(d.replica());
  }

  private static RoutingRequest request(String session, String model, int[] tokens) {
    return RoutingRequest.builder().model(model).sessionId(session).tenant("acme")
        .promptTokens(tokens).expectedOutputTokens(200).build();
  }

  private static int[] tokens(Random rnd, int n) {
    int[] t = new int[n];
    for (int i = 0; i < n; i++) {
      t[i] = rnd.nextInt(150_000);
    }
    return t;
  }

  private static int[] concat(int[] a, int[] b) {
    int[] c = java.util.Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }
}
