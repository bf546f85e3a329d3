package io.affinityrouter.examples.simulator.strategy;

import io.affinityrouter.examples.simulator.workload.SimRequest;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A gateway-local, approximate view of what each replica caches, learned only from the prompts this
 * gateway sent there (never from the engines): per replica, an LRU set of prompt segments bounded in
 * tokens, as SGLang's approximate radix tree keeps (the emulation sets the capacity).
 *
 * <p>Not thread-safe: one per gateway.
 */
final class SentPrefixIndex {
  private final long capacityTokens;
  private final List<LinkedHashMap<Long, Integer>> byReplica = new ArrayList<>();
  private final List<long[]> sizes = new ArrayList<>();

  /** Creates an index holding at most {@code capacityTokens} tokens per replica. */
  SentPrefixIndex(long capacityTokens) {
    this.capacityTokens = capacityTokens;
  }

  private LinkedHashMap<Long, Integer> set(int replica) {
    while (byReplica.size() <= replica) {
      byReplica.add(new LinkedHashMap<>(16, 0.75f, true));
      sizes.add(new long[1]);
    }
    return byReplica.get(replica);
  }

  /** Tokens of the request's longest prompt prefix recorded for the replica. */
  int matchedTokens(int replica, SimRequest request) {
    LinkedHashMap<Long, Integer> set = set(replica);
    long[] keys = request.keys();
    int[] tokens = request.segmentTokens();
    int matched = 0;
    for (int i = 0; i < keys.length; i++) {
      if (!set.containsKey(keys[i])) {
        break;
      }
      matched += tokens[i];
    }
    return matched;
  }

  /** Records that the request's prompt was sent to the replica (most recently used). */
  void record(int replica, SimRequest request) {
    LinkedHashMap<Long, Integer> set = set(replica);
    long[] size = sizes.get(replica);
    long[] keys = request.keys();
    int[] tokens = request.segmentTokens();
    for (int i = 0; i < keys.length; i++) {
      if (set.put(keys[i], tokens[i]) == null) {
        size[0] += tokens[i];
      }
    }
    Iterator<Map.Entry<Long, Integer>> it = set.entrySet().iterator();
    while (size[0] > capacityTokens && it.hasNext()) {
      size[0] -= it.next().getValue();
      it.remove();
    }
  }

  /** Tokens recorded for the replica. */
  long sizeTokens(int replica) {
    set(replica);
    return sizes.get(replica)[0];
  }
}
