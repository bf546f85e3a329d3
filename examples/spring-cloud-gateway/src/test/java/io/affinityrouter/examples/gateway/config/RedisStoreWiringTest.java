package io.affinityrouter.examples.gateway.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.InMemoryBindingStore;
import io.affinityrouter.spi.BindingStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code affinity-router.redis-uri} against a real {@code redis-server} (started here on a free
 * port): two gateways' routers share session bindings through it, which two routers with the
 * default in-memory store do not.
 */
class RedisStoreWiringTest {
  static Process redis;
  static int port;

  @BeforeAll
  static void startRedis() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    redis = new ProcessBuilder("redis-server", "--port", Integer.toString(port),
        "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (true) {
      try {
        if (command("*1\r\n$4\r\nPING\r\n").startsWith("+PONG")) {
          return;
        }
      } catch (IOException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
      }
      Thread.sleep(50);
    }
  }

  @AfterAll
  static void stopRedis() throws InterruptedException {
    redis.destroy();
    redis.waitFor(10, TimeUnit.SECONDS);
  }

  /** Sends one RESP command, returns the first reply line. */
  static String command(String resp) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(5_000);
      OutputStream out = socket.getOutputStream();
      out.write(resp.getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      StringBuilder sb = new StringBuilder();
      for (int c; (c = in.read()) != -1 && c != '\n'; ) {
        sb.append((char) c);
      }
      return sb.toString().strip();
    }
  }

  final ApplicationContextRunner gateway = new ApplicationContextRunner()
      .withConfiguration(AutoConfigurations.of(AffinityRouterAutoConfiguration.class))
      .withBean(MeterRegistry.class, SimpleMeterRegistry::new);

  static final List<Replica> FLEET = List.of(Replica.of("r1"), Replica.of("r2"), Replica.of("r3"),
      Replica.of("r4"));

  static RoutingRequest turn(String session) {
    return RoutingRequest.builder().model("llama-3-8b").sessionId(session)
        .promptText("system\nYou are a careful assistant.\nuser\nSummarise the routing design.\n")
        .build();
  }

  /**
   * Gateway 1 claims a session, then repins it (its replica left gateway 1's list); gateway 2, which
   * still lists every replica, must send the session where gateway 1 moved it.
   */
  static RoutingDecision[] moveOnOneGatewayThenAskTheOther(Router one, Router two, String session) {
    RoutingDecision claimed = one.select(turn(session), FLEET);
    claimed.lease().close();
    List<Replica> withoutIt = FLEET.stream()
        .filter(r -> !r.id().equals(claimed.replica().id())).toList();
    RoutingDecision moved = one.select(turn(session), withoutIt);
    moved.lease().close();
    RoutingDecision other = two.select(turn(session), FLEET);
    other.lease().close();
    return new RoutingDecision[] {claimed, moved, other};
  }

  @Test
  void twoGatewaysShareBindingsThroughRedis() throws IOException {
    // Time is not the subject here: a generous store timeout, so a busy machine routes no turn
    // degraded.
    ApplicationContextRunner withRedis = gateway.withPropertyValues(
        "affinity-router.redis-uri=redis://127.0.0.1:" + port,
        "affinity-router.store-timeout=10s");
    withRedis.run(one -> withRedis.run(two -> {
      assertThat(one).hasNotFailed();
      for (int s = 0; s < 10; s++) {
        RoutingDecision[] d = moveOnOneGatewayThenAskTheOther(one.getBean(Router.class),
            two.getBean(Router.class), "shared-" + s);
        assertThat(d[0].reason()).isEqualTo(RoutingReason.SESSION_CLAIMED);
        assertThat(d[1].reason()).isEqualTo(RoutingReason.SESSION_REPINNED);
        assertThat(d[2].replica().id()).isEqualTo(d[1].replica().id());
        assertThat(d[2].reason()).isEqualTo(RoutingReason.SESSION_AFFINITY);
        assertThat(d[2].bindingGeneration()).isEqualTo(d[1].bindingGeneration());
        assertThat(d[2].isDegraded()).isFalse();
      }
    }));
    assertThat(Long.parseLong(command("*1\r\n$6\r\nDBSIZE\r\n").substring(1)))
        .isGreaterThanOrEqualTo(10);
  }

  @Test
  void withoutRedisEachGatewayKeepsItsOwnBindings() {
    gateway.run(one -> gateway.run(two -> {
      RoutingDecision[] d = moveOnOneGatewayThenAskTheOther(one.getBean(Router.class),
          two.getBean(Router.class), "local");
      assertThat(d[2].reason()).isEqualTo(RoutingReason.SESSION_CLAIMED);
    }));
  }

  @Test
  void redisUriAndAStoreBeanTogetherAreRefused() {
    gateway.withPropertyValues("affinity-router.redis-uri=redis://127.0.0.1:" + port)
        .withBean(BindingStore.class, () -> InMemoryBindingStore.builder().build())
        .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
            .hasMessageStartingWith("affinity-router.redis-uri: set, and a BindingStore bean"));
  }
}
