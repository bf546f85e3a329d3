package io.affinityrouter.core;

import io.affinityrouter.Replica;
import io.affinityrouter.RoutingRequest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/** Test data: token prompts and replica lists. */
public final class Prompts {
  private Prompts() {}

  public static int[] tokens(long seed, int n) {
    SplittableRandom r = new SplittableRandom(seed);
    int[] t = new int[n];
    for (int i = 0; i < n; i++) {
      t[i] = r.nextInt(150_000);
    }
    return t;
  }

  public static int[] concat(int[] a, int[] b) {
    int[] c = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }

  public static RoutingRequest session(String session, int[] tokens) {
    return RoutingRequest.builder().sessionId(session).promptTokens(tokens)
        .expectedOutputTokens(100).build();
  }

  public static RoutingRequest anonymous(int[] tokens) {
    return RoutingRequest.builder().promptTokens(tokens).expectedOutputTokens(100).build();
  }

  public static List<Replica> replicas(int n) {
    List<Replica> list = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      list.add(Replica.of("r" + i));
    }
    return list;
  }
}
