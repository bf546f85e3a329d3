package io.affinityrouter.examples.gateway.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.affinityrouter.Replica;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingReason;
import io.affinityrouter.RoutingRequest;
import io.affinityrouter.core.AffinityRouter;
import io.affinityrouter.core.EngineProfile;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

class AffinityRouterPropertiesTest {

  static AffinityRouterProperties bind(Map<String, String> properties) {
    return new Binder(new MapConfigurationPropertySource(properties))
        .bindOrCreate("affinity-router", AffinityRouterProperties.class);
  }

  @Test
  void defaults() {
    AffinityRouterProperties p = bind(Map.of());
    assertThat(p.sessionHeader()).isEqualTo("x-session-id");
    assertThat(p.tenantHeader()).isEqualTo("x-tenant-id");
    assertThat(p.scrape().interval()).isEqualTo(Duration.ofMillis(100));
    assertThat(p.scrape().timeout()).isEqualTo(Duration.ofSeconds(1));
    assertThat(p.scrape().path()).isEqualTo("/metrics");
    assertThat(p.scrape().unhealthyAfterFailures()).isEqualTo(3);
    assertThat(p.topK()).isNull(); // the builder's default applies
    assertThat(p.engine().isSet()).isFalse();
    assertThat(p.engine().profile()).isEqualTo(AffinityRouter.Builder.DEFAULT_ENGINE_PROFILE);
  }

  @Test
  void limitsAndRetryAfterReachTheRouter() {
    AffinityRouterProperties p = bind(Map.of(
        "affinity-router.max-in-flight-requests", "1",
        "affinity-router.unavailable-retry-after", "7s",
        "affinity-router.top-k", "2"));
    RoutingRequest request = RoutingRequest.builder().promptText("hello").build();
    List<Replica> one = List.of(Replica.of("r1"));
    try (Router router = p.applyTo(AffinityRouter.builder()).build()) {
      RoutingDecision first = router.select(request, one);
      assertThat(first.isRouted()).isTrue();
      RoutingDecision second = router.select(request, one);
      assertThat(second.reason()).isEqualTo(RoutingReason.ALL_AT_LIMIT);
      // only the 503 half of the pair was set: the 429 half keeps the builder's default
      assertThat(second.retryAfter())
          .isEqualTo(AffinityRouter.Builder.DEFAULT_AT_LIMIT_RETRY_AFTER);
      first.lease().close();
      RoutingDecision none = router.select(request, List.of());
      assertThat(none.reason()).isEqualTo(RoutingReason.NO_REPLICA);
      assertThat(none.retryAfter()).isEqualTo(Duration.ofSeconds(7));
    }
  }

  @Test
  void outOfRangeRouterOptionFailsWithTheBuildersMessage() {
    AffinityRouterProperties p = bind(Map.of("affinity-router.top-k", "0"));
    assertThatThrownBy(() -> p.applyTo(AffinityRouter.builder()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("topK: 0 (expected: > 0)");
  }

  @Test
  void theEngineProfileBindsFigureByFigureAndIsChecked() {
    AffinityRouterProperties p = bind(Map.of(
        "affinity-router.engine.prefill-tokens-per-second", "20000",
        "affinity-router.engine.attention-seconds", "0"));
    EngineProfile defaults = AffinityRouter.Builder.DEFAULT_ENGINE_PROFILE;
    // the figures that are not set keep the default profile's
    assertThat(p.engine().profile()).isEqualTo(
        defaults.withPrefillTokensPerSecond(20_000).withAttentionSeconds(0));
    RoutingRequest request = RoutingRequest.builder().promptTokens(new int[2000]).build();
    try (Router router = p.applyTo(AffinityRouter.builder()).build()) {
      RoutingDecision d = router.select(request, List.of(Replica.of("r1")));
      assertThat(d.scores().prefillSeconds()).isCloseTo(0.1, within(1e-9)); // 2000 / 20,000
      d.lease().close();
    }
    AffinityRouterProperties bad =
        bind(Map.of("affinity-router.engine.batch-slowdown-sequences", "-1"));
    assertThatThrownBy(() -> bad.applyTo(AffinityRouter.builder()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("batchSlowdownSequences: -1.0 (expected: > 0 and finite)");
  }

  @Test
  void badScrapeSettingsFailAtBinding() {
    assertThatThrownBy(() -> bind(Map.of("affinity-router.scrape.interval", "0s")))
        .isInstanceOf(BindException.class)
        .rootCause().hasMessage("affinity-router.scrape.interval: PT0S (expected: > 0)");
    assertThatThrownBy(() -> bind(Map.of("affinity-router.scrape.path", "metrics")))
        .rootCause().hasMessage("affinity-router.scrape.path: 'metrics' (expected: starting with /)");
    assertThatThrownBy(() -> bind(Map.of("affinity-router.session-header", " ")))
        .rootCause().hasMessage("affinity-router.session-header: ' ' (expected: a header name)");
  }
}
