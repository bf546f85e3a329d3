package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.spi.ReplicaScorer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Plugins listed in META-INF/services are found by discoverPlugins() and take part in scoring. */
class PluginDiscoveryTest {
  /** Prefers replicas whose id ends in "-gpu-a" by half a second; listed in test resources. */
  public static final class PreferGpuA implements ReplicaScorer {
    @Override
    public String name() {
      return "prefer-gpu-a";
    }

    @Override
    public double weightSeconds() {
      return 0.5;
    }

    @Override
    public double score(RoutingRequest request, Replica replica) {
      return replica.id().endsWith("-gpu-a") ? 1 : 0;
    }
  }

  @Test
  void discoveredScorerSteersTheChoice() {
    List<Replica> fleet = List.of(Replica.of("x-gpu-b"), Replica.of("y-gpu-a"),
        Replica.of("z-gpu-b"));
    Router router = AffinityRouter.builder().discoverPlugins().build();
    for (int i = 0; i < 20; i++) {
      RoutingDecision d = router.select(Prompts.anonymous(Prompts.tokens(i, 256)), fleet);
      assertThat(d.replica().id()).isEqualTo("y-gpu-a");
      assertThat(d.scores().pluginSeconds()).isEqualTo(0.5);
      d.lease().close();
    }
    Router plain = AffinityRouter.builder().build();
    assertThat(plain.select(Prompts.anonymous(Prompts.tokens(1, 256)), fleet).scores()
        .pluginSeconds()).isZero();
  }
}
