package io.affinityrouter.core.engine;

import static io.affinityrouter.core.engine.EngineServer.fixture;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.spi.ReplicaDiscovery;
import io.affinityrouter.spi.ReplicaEndpoint;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Replicas added and removed by a discovery, polled and pushed. */
class FleetDiscoveryTest {
  private final EngineServer a = new EngineServer().metrics(fixture(EngineServer.VLLM_V1));
  private final EngineServer b = new EngineServer().metrics(fixture(EngineServer.VLLM_V0));
  private FleetView fleet;

  /** A discovery the test changes; it pushes when asked to. */
  static final class MutableDiscovery implements ReplicaDiscovery {
    final AtomicReference<List<ReplicaEndpoint>> current = new AtomicReference<>(List.of());
    final AtomicReference<Consumer<List<ReplicaEndpoint>>> listener = new AtomicReference<>();
    final AtomicBoolean failing = new AtomicBoolean();
    final AtomicBoolean unwatched = new AtomicBoolean();

    @Override
    public List<ReplicaEndpoint> endpoints() {
      if (failing.get()) {
        throw new IllegalStateException("registry down");
      }
      return current.get();
    }

    @Override
    public AutoCloseable watch(Consumer<List<ReplicaEndpoint>> onChange) {
      listener.set(onChange);
      return () -> unwatched.set(true);
    }

    void push(List<ReplicaEndpoint> endpoints) {
      current.set(endpoints);
      listener.get().accept(endpoints);
    }
  }

  @AfterEach
  void tearDown() {
    if (fleet != null) {
      fleet.close();
    }
    a.close();
    b.close();
  }

  private List<String> ids() {
    return fleet.replicas().stream().map(Replica::id).toList();
  }

  @Test
  void aPolledDiscoveryAddsAndRemovesReplicas() throws Exception {
    MutableDiscovery d = new MutableDiscovery();
    ReplicaEndpoint ea = ReplicaEndpoint.builder("a", a.uri()).build();
    ReplicaEndpoint eb = ReplicaEndpoint.builder("b", b.uri()).build();
    d.current.set(List.of(ea));
    fleet = FleetView.builder().scrapeTimeout(java.time.Duration.ofSeconds(10)).discovery(d).build();
    assertThat(fleet.replicas()).as("nothing before the first poll").isEmpty();
    fleet.scrapeNow().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(ids()).containsExactly("a");
    d.current.set(List.of(eb, ea, ReplicaEndpoint.builder("a", b.uri()).build()));
    List<Replica> both = fleet.scrapeNow().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(both).extracting(Replica::id).as("in discovery order, first id wins")
        .containsExactly("b", "a");
    assertThat(both).extracting(Replica::health).containsOnly(ReplicaHealth.HEALTHY);
    assertThat(both.get(0).address()).isEqualTo(b.uri().toString());

    d.failing.set(true);
    fleet.scrapeNow().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(ids()).as("a failing discovery keeps the set").containsExactly("b", "a");
    d.failing.set(false);
    d.current.set(List.of(eb));
    fleet.scrapeNow().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(ids()).containsExactly("b");
  }

  @Test
  void aReplicaTheDiscoveryDropsIsRetiredFromTheRouter() throws Exception {
    MutableDiscovery d = new MutableDiscovery();
    ReplicaEndpoint ea = ReplicaEndpoint.builder("a", a.uri()).build();
    ReplicaEndpoint eb = ReplicaEndpoint.builder("b", b.uri()).build();
    d.current.set(List.of(ea, eb));
    try (io.affinityrouter.Router router = io.affinityrouter.core.AffinityRouter.builder()
        .build()) {
      java.util.List<String> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
      java.util.List<Boolean> retired = new java.util.concurrent.CopyOnWriteArrayList<>();
      fleet = FleetView.builder().scrapeTimeout(Duration.ofSeconds(10)).discovery(d).build()
          .addRemovalListener(id -> {
            throw new IllegalStateException("a listener's own bug");
          })
          .addRemovalListener(heard::add)
          .addRemovalListener(id -> retired.add(router.retire(id)));
      List<Replica> both = fleet.scrapeNow().toCompletableFuture().get(10, TimeUnit.SECONDS);
      var decision = router.select(io.affinityrouter.RoutingRequest.builder()
          .promptText("hello").build(), both);
      decision.lease().close();
      router.select(io.affinityrouter.RoutingRequest.builder().promptText("hello").build(),
          both.stream().filter(r -> !r.id().equals(decision.replica().id())).toList())
          .lease().close();
      d.current.set(List.of(eb));
      fleet.scrapeNow().toCompletableFuture().get(10, TimeUnit.SECONDS);
      d.current.set(List.of(eb)); // unchanged: nothing more is removed
      fleet.scrapeNow().toCompletableFuture().get(10, TimeUnit.SECONDS);
      assertThat(heard).containsExactly("a");
      assertThat(retired).as("the router knew it").containsExactly(true);
      assertThat(router.retire("a")).as("already forgotten").isFalse();
    }
  }

  @Test
  void pushedChangesApplyWithoutAPoll() {
    MutableDiscovery d = new MutableDiscovery();
    d.current.set(List.of(ReplicaEndpoint.builder("a", a.uri()).build()));
    fleet = FleetView.builder().scrapeTimeout(java.time.Duration.ofSeconds(10)).discovery(d).discoveryInterval(Duration.ofHours(1))
        .scrapeInterval(Duration.ofMillis(20)).build().start();
    EngineServer.await("a scraped", () -> fleet.replica("a")
        .map(r -> r.health() == ReplicaHealth.HEALTHY).orElse(false));
    d.push(List.of(ReplicaEndpoint.builder("a", a.uri()).build(),
        ReplicaEndpoint.builder("b", b.uri()).build()));
    EngineServer.await("b added and scraped", () -> fleet.replica("b")
        .map(r -> r.health() == ReplicaHealth.HEALTHY).orElse(false));
    d.push(List.of(ReplicaEndpoint.builder("b", b.uri()).build()));
    EngineServer.await("a removed", () -> ids().equals(List.of("b")));
    fleet.close();
    assertThat(d.unwatched).isTrue();
  }

  @Test
  void aScrapeInFlightOfARemovedReplicaIsCancelledAndCannotBringItBack() throws Exception {
    MutableDiscovery d = new MutableDiscovery();
    a.answer("/metrics", EngineServer.Answer.held());
    d.current.set(List.of(ReplicaEndpoint.builder("a", a.uri()).build(),
        ReplicaEndpoint.builder("b", b.uri()).build()));
    fleet = FleetView.builder().scrapeTimeout(Duration.ofMinutes(1)).discovery(d).build();
    var round = fleet.scrapeNow().toCompletableFuture();
    EngineServer.await("a's scrape in flight", () -> a.count("/metrics") == 1);
    d.current.set(List.of(ReplicaEndpoint.builder("b", b.uri()).build()));
    List<Replica> after = fleet.scrapeNow().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(after).extracting(Replica::id).containsExactly("b");
    assertThat(round.get(10, TimeUnit.SECONDS)).as("the round ends with a's scrape abandoned")
        .isNotNull();
    a.metrics(fixture(EngineServer.VLLM_V1));
    a.release();
    fleet.scrapeNow().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(ids()).containsExactly("b");
  }

  @Test
  void anEndpointThatChangesStartsOver() throws Exception {
    MutableDiscovery d = new MutableDiscovery();
    d.current.set(List.of(ReplicaEndpoint.builder("a", a.uri()).build()));
    fleet = FleetView.builder().scrapeTimeout(java.time.Duration.ofSeconds(10)).discovery(d).build();
    assertThat(fleet.scrapeNow().toCompletableFuture().get(10, TimeUnit.SECONDS).get(0).health())
        .isEqualTo(ReplicaHealth.HEALTHY);
    d.current.set(List.of(ReplicaEndpoint.builder("a", EngineServer.refusingUri()).build()));
    List<Replica> moved = fleet.scrapeNow().toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertThat(moved.get(0).health()).isEqualTo(ReplicaHealth.UNHEALTHY);
    assertThat(moved.get(0).address()).isNotEqualTo(a.uri().toString());
  }
}
