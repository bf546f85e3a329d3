package io.affinityrouter.redis.testing;

import io.lettuce.core.RedisURI;
import java.util.ArrayList;
import java.util.List;

/** A 3-master Redis Cluster on 127.0.0.1 made of {@link RedisProcess}es, each in a fresh directory. */
public final class RedisClusterProcesses implements AutoCloseable {

  private final List<RedisProcess> nodes = new ArrayList<>();

  public RedisClusterProcesses(int masters) {
    try {
      for (int i = 0; i < masters; i++) {
        nodes.add(RedisProcess.start("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
            "--cluster-node-timeout", "2000"));
      }
      List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
      for (RedisProcess n : nodes) {
        create.add("127.0.0.1:" + n.port());
      }
      create.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
      String out = RedisProcess.run(create, 60);
      if (!out.contains("[OK] All 16384 slots covered")) {
        throw new IllegalStateException("cluster create failed: " + out);
      }
      awaitOk();
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /** Waits until every node reports {@code cluster_state:ok}. */
  public void awaitOk() {
    long deadline = System.currentTimeMillis() + 30_000;
    for (RedisProcess n : nodes) {
      while (!n.cli("cluster", "info").contains("cluster_state:ok")) {
        if (System.currentTimeMillis() > deadline) {
          throw new IllegalStateException("cluster not ok: " + n.cli("cluster", "info"));
        }
        RedisProcess.sleep(50);
      }
    }
  }

  public List<RedisProcess> nodes() {
    return nodes;
  }

  public RedisURI seed() {
    return RedisURI.create("redis://127.0.0.1:" + nodes.get(0).port());
  }

  public String nodeId(RedisProcess node) {
    return node.cli("cluster", "myid");
  }

  /** Moves {@code slots} slots (with their keys) from one node to another, as an operator would. */
  public String reshard(RedisProcess from, RedisProcess to, int slots) {
    return RedisProcess.run(List.of("redis-cli", "--cluster", "reshard", "127.0.0.1:" + from.port(),
        "--cluster-from", nodeId(from), "--cluster-to", nodeId(to), "--cluster-slots",
        Integer.toString(slots), "--cluster-yes"), 120);
  }

  @Override
  public void close() {
    nodes.forEach(RedisProcess::close);
  }
}
