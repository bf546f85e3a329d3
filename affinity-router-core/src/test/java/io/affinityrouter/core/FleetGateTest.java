package io.affinityrouter.core;

import static io.affinityrouter.core.Prompts.anonymous;
import static io.affinityrouter.core.Prompts.replicas;
import static io.affinityrouter.core.Prompts.tokens;
import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.Router;
import io.affinityrouter.spi.FleetLimits;
import io.affinityrouter.spi.RoutingListener;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The fleet gate with an in-memory {@link FleetLimits}: slots taken, freed, refused, late. */
class FleetGateTest {
  /** Slots counted in a map; {@code hang} makes every answer never come. */
  private static final class CountingLimits implements FleetLimits {
    final Map<String, AtomicInteger> held = new ConcurrentHashMap<>();
    volatile boolean hang;

    @Override
    public CompletionStage<Optional<Permit>> acquire(String replicaId, int maxRequests,
        Duration leaseTime) {
      if (hang) {
        return new CompletableFuture<>();
      }
      AtomicInteger n = held.computeIfAbsent(replicaId, x -> new AtomicInteger());
      if (n.incrementAndGet() > maxRequests) {
        n.decrementAndGet();
        return CompletableFuture.completedFuture(Optional.empty());
      }
      AtomicInteger once = new AtomicInteger();
      return CompletableFuture.completedFuture(Optional.of(() -> {
        if (once.getAndIncrement() == 0) {
          n.decrementAndGet();
        }
      }));
    }
  }

  private final CountingLimits limits = new CountingLimits();
  private final AtomicInteger decisions = new AtomicInteger();
  private final AtomicInteger failures = new AtomicInteger();
  private final Router router = AffinityRouter.builder().maxInFlightRequests(2)
      .storeTimeout(Duration.ofMillis(200)).fleetLimits(limits, Duration.ofMinutes(1))
      .addListener(new RoutingListener() {
        @Override
        public void onDecision(RoutingRequest request, RoutingDecision decision, long nanos) {
          decisions.incrementAndGet();
        }

        @Override
        public void onPluginFailure(String plugin, Throwable error) {
          failures.incrementAndGet();
        }
      }).build();

  @Test
  void aSlotIsHeldWhileTheLeaseIsOpenAndTheFleetLimitSheds() {
    // another gateway's request holds one of r0's two slots
    limits.held.computeIfAbsent("r0", x -> new AtomicInteger()).incrementAndGet();
    RoutingDecision a = router.select(anonymous(tokens(1, 64)), replicas(1));
    assertThat(a.isRouted()).isTrue();
    assertThat(limits.held.get("r0")).hasValue(2);
    RoutingDecision shed = router.select(anonymous(tokens(2, 64)), replicas(1));
    assertThat(shed.reason()).as("room locally, none fleet-wide").isEqualTo(RoutingReason.ALL_AT_LIMIT);
    a.lease().close();
    assertThat(limits.held.get("r0")).as("a's slot freed with its lease").hasValue(1);
    RoutingDecision c = router.select(anonymous(tokens(3, 64)), replicas(1));
    assertThat(c.isRouted()).isTrue();
    c.lease().close();
    c.lease().close(); // idempotent
    assertThat(limits.held.get("r0")).hasValue(1); // the other gateway's
    assertThat(decisions).as("each decision notified once").hasValue(3);
  }

  @Test
  void whenTheLimitsDoNotAnswerTheLocalLimitsAloneApply() {
    limits.hang = true;
    RoutingDecision d = router.select(anonymous(tokens(1, 64)), replicas(2));
    assertThat(d.isRouted()).isTrue();
    assertThat(failures).hasValue(1);
    d.lease().close();
  }
}
