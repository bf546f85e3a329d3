package io.affinityrouter.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.redis.testing.RedisProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisReadOnlyException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import io.lettuce.core.api.async.RedisStringAsyncCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A failover the connection's own topology never heard of: the master it talks to is demoted by
 * hand and the other server promoted, with no sentinel to announce it. The first READONLY answer
 * reopens the connection to where the connector (the sentinels, in production) now points.
 */
class FollowedMasterTest {
  private RedisProcess a;
  private RedisProcess b;
  private RedisClient client;

  @BeforeEach
  void start() {
    a = RedisProcess.start();
    b = RedisProcess.start("--replicaof", "127.0.0.1", Integer.toString(a.port()));
    client = RedisClient.create();
    client.setOptions(io.lettuce.core.ClientOptions.builder()
        .timeoutOptions(io.lettuce.core.TimeoutOptions.enabled(Duration.ofSeconds(30))).build());
  }

  @AfterEach
  void stop() {
    client.shutdown();
    b.close();
    a.close();
  }

  private static RedisURI uri(RedisProcess p) {
    return RedisURI.create("redis://127.0.0.1:" + p.port());
  }

  private static Object get(java.util.concurrent.CompletionStage<?> stage) throws Exception {
    return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  @Test
  void aReadOnlyAnswerReopensTheConnectionWhereTheConnectorNowPoints() throws Exception {
    AtomicReference<RedisProcess> master = new AtomicReference<>(a);
    AtomicInteger connects = new AtomicInteger();
    try (FollowedMaster followed = new FollowedMaster(client.connect(uri(a)), () -> {
      connects.incrementAndGet();
      return client.connectAsync(StringCodec.UTF8, uri(master.get()));
    })) {
      RedisStringAsyncCommands<String, String> strings =
          followed.commands(RedisStringAsyncCommands.class);
      RedisScriptingAsyncCommands<String, String> scripting =
          followed.commands(RedisScriptingAsyncCommands.class);
      assertThat(get(strings.set("before", "1"))).isEqualTo("OK");
      long synced = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!b.cli("get", "before").equals("1") && System.nanoTime() < synced) {
        Thread.sleep(10);
      }

      // The failover, unannounced: b promoted, a demoted to its replica.
      assertThat(b.cli("replicaof", "no", "one")).isEqualTo("OK");
      assertThat(a.cli("replicaof", "127.0.0.1", Integer.toString(b.port()))).isEqualTo("OK");
      master.set(b);

      // A writing script on the demoted server answers READONLY, as the store's claims do.
      assertThatThrownBy(() -> get(scripting.eval("return redis.call('set', KEYS[1], 'x')",
          ScriptOutputType.STATUS, "claim")))
          .isInstanceOf(ExecutionException.class).hasCauseInstanceOf(RedisReadOnlyException.class);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (followed.reconnects() == 0 && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(followed.reconnects()).isEqualTo(1);
      assertThat(connects).hasValue(1);
      assertThat(get(strings.set("after", "2"))).isEqualTo("OK");
      assertThat(b.cli("get", "after")).isEqualTo("2");
      assertThat(b.cli("get", "before")).isEqualTo("1"); // replicated before the failover
    }
  }

  @Test
  void otherErrorsAndReadOnlyAnswersInsideTheIntervalDoNotReconnect() throws Exception {
    AtomicInteger connects = new AtomicInteger();
    try (FollowedMaster followed = new FollowedMaster(client.connect(uri(b)), () -> {
      connects.incrementAndGet();
      return client.connectAsync(StringCodec.UTF8, uri(b)); // still the replica
    })) {
      RedisStringAsyncCommands<String, String> strings =
          followed.commands(RedisStringAsyncCommands.class);
      RedisScriptingAsyncCommands<String, String> scripting =
          followed.commands(RedisScriptingAsyncCommands.class);
      assertThatThrownBy(() -> get(scripting.eval("return redis.call('nosuchcommand')",
          ScriptOutputType.STATUS))).isInstanceOf(ExecutionException.class);
      assertThat(connects).hasValue(0);

      // b is a replica: READONLY, one reconnect; the next READONLY answers within the second
      // after it are not each a reconnect (one sent as the old connection closes fails so).
      long start = System.nanoTime();
      for (int i = 0; i < 20; i++) {
        assertThatThrownBy(() -> get(strings.set("k", "v")))
            .hasCauseInstanceOf(RedisException.class);
      }
      long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
      assertThat(connects.get()).isBetween(1, 2 + (int) seconds);
    }
  }

  @Test
  void anAnnouncedSwitchReopensAtOnceAndAgainAfterAReopenUnderWay() throws Exception {
    List<CompletableFuture<StatefulRedisConnection<String, String>>> opened =
        new CopyOnWriteArrayList<>();
    try (FollowedMaster followed = new FollowedMaster(client.connect(uri(a)), () -> {
      CompletableFuture<StatefulRedisConnection<String, String>> f = new CompletableFuture<>();
      opened.add(f);
      return f;
    })) {
      followed.demoted(); // a READONLY: one reopen, still opening
      assertThat(opened).hasSize(1);
      followed.demoted(); // inside the interval: nothing more
      followed.switched("mymaster 127.0.0.1 1 127.0.0.1 2"); // announced while it opens
      assertThat(opened).hasSize(1);
      opened.get(0).complete(client.connect(uri(a)));
      assertThat(opened).as("reopened once more after the switch").hasSize(2);
      opened.get(1).complete(client.connect(uri(b)));
      assertThat(followed.reconnects()).isEqualTo(2);
      followed.switched("mymaster 127.0.0.1 2 127.0.0.1 1"); // inside the interval, yet at once
      assertThat(opened).hasSize(3);
      opened.get(2).complete(client.connect(uri(a)));
      assertThat(followed.reconnects()).isEqualTo(3);
    }
  }

  @Test
  void onlyCommandInterfacesOfTheConnectionAreProxied() {
    try (FollowedMaster followed = new FollowedMaster(client.connect(uri(a)),
        () -> client.connectAsync(StringCodec.UTF8, uri(a)))) {
      assertThatThrownBy(() -> followed.commands(Runnable.class))
          .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("RedisAsyncCommands");
    }
  }
}
