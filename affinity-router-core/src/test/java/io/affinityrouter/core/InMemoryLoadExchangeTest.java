package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.affinityrouter.spi.LoadExchange.Share;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class InMemoryLoadExchangeTest {
  private final InMemoryLoadExchange exchange = new InMemoryLoadExchange(Duration.ofSeconds(5));

  @Test
  void aRouterSeesTheOthersSummedPerReplicaButNeverItself() {
    exchange.exchange("a", Map.of("r1", 2.0, "r2", 0.5), 1_000);
    exchange.exchange("b", Map.of("r1", 1.0), 1_000);
    Map<String, Double> seenByC = exchange.exchange("c", Map.of("r1", 9.0), 1_000);
    assertThat(seenByC.get("r1")).isCloseTo(3.0, within(1e-9));
    assertThat(seenByC.get("r2")).isCloseTo(0.5, within(1e-9));
    Map<String, Double> seenByA = exchange.exchange("a", Map.of("r1", 2.0), 1_000);
    assertThat(seenByA.get("r1")).isCloseTo(10.0, within(1e-9)); // b's 1 + c's 9, not a's own
    assertThat(seenByA).doesNotContainKey("r2"); // a's own publication was replaced
  }

  @Test
  void turnRatesAreSummedAsPublishedWhileQueuesDrain() {
    exchange.share("a", Map.of("r1", new Share(2.0, 3.0), "r2", new Share(0, 0.5)), 1_000);
    exchange.share("b", Map.of("r1", new Share(0, 1.0)), 1_000);
    Map<String, Share> seenByC = exchange.share("c", Map.of("r1", new Share(0, 7)), 2_000);
    assertThat(seenByC).containsOnly(Map.entry("r1", new Share(1.0, 4.0)),
        Map.entry("r2", new Share(0, 0.5)));
    // the queue-only call sees the same queues and no turns
    assertThat(exchange.exchange("d", Map.of(), 2_000)).containsOnly(Map.entry("r1", 1.0));
    assertThatThrownBy(() -> new Share(0, Double.NaN))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("sessionTurnsPerSecond: NaN (expected: >= 0 and finite)");
  }

  @Test
  void publicationsDrainWithTheirAgeAndNeverGoNegative() {
    exchange.exchange("a", Map.of("r1", 2.0, "r2", 0.3), 1_000);
    Map<String, Double> later = exchange.exchange("b", Map.of(), 1_500);
    assertThat(later.get("r1")).isCloseTo(1.5, within(1e-9));
    assertThat(later).doesNotContainKey("r2"); // 0.3 s drained in 0.5 s
  }

  @Test
  void aRouterThatStoppedPublishingIsForgottenAfterTheStalenessLimit() {
    InMemoryLoadExchange e = new InMemoryLoadExchange(Duration.ofSeconds(1));
    e.exchange("a", Map.of("r1", 100.0), 1_000);
    assertThat(e.exchange("b", Map.of(), 1_900).get("r1")).isCloseTo(99.1, within(1e-9));
    assertThat(e.exchange("b", Map.of(), 2_100)).isEmpty();
    e.exchange("a", Map.of("r1", 1.0), 2_200); // it comes back
    assertThat(e.exchange("b", Map.of(), 2_200).get("r1")).isCloseTo(1.0, within(1e-9));
  }

  @Test
  void thePublicationIsCopied() {
    Map<String, Double> mine = new HashMap<>(Map.of("r1", 1.0));
    exchange.exchange("a", mine, 0);
    mine.put("r1", 50.0);
    assertThat(exchange.exchange("b", Map.of(), 0).get("r1")).isCloseTo(1.0, within(1e-9));
  }

  @Test
  void badInputIsRejectedWithTheReason() {
    assertThatThrownBy(() -> exchange.exchange(" ", Map.of(), 0))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("routerId: blank (expected: a non-blank string)");
    assertThatThrownBy(() -> exchange.exchange("a", Map.of("r1", -1.0), 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("queuedSeconds of r1: -1.0 (expected: >= 0 and finite)");
    assertThatThrownBy(() -> exchange.exchange("a", Map.of("r1", Double.NaN), 0))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new InMemoryLoadExchange(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("staleAfter: PT0S (expected: > 0)");
    // nothing was published by the failed calls
    assertThat(exchange.exchange("b", Map.of(), 0)).isEmpty();
  }
}
