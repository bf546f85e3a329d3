package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.ModelState;
import io.affinityrouter.ReplicaHealth;
import io.affinityrouter.core.metrics.EngineMetrics;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class BackendPoolTest {
  private static final String SCRAPE = ""
      + "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 3.0\n"
      + "vllm:num_requests_waiting{engine=\"0\",model_name=\"m\"} 1.0\n"
      + "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.25\n"
      + "vllm:generation_tokens_total{engine=\"0\",model_name=\"m\"} %d\n"
      + "vllm:engine_sleep_state{engine=\"0\",model_name=\"m\",sleep_state=\"awake\"} %d\n"
      + "vllm:cache_config_info{block_size=\"16\",engine=\"0\",num_gpu_blocks=\"100\"} 1.0\n";

  private final AtomicLong now = new AtomicLong(1_000);
  private final BackendPool pool = new BackendPool(Map.of("a", URI.create("http://h:1")),
      Duration.ofSeconds(2), now::get);

  private static EngineMetrics scrape(long generated, boolean awake) {
    return EngineMetrics.parseStrict(String.format(SCRAPE, generated, awake ? 1 : 0));
  }

  @Test
  void unhealthyUntilScrapedThenLoadAndModelsFromTheScrape() {
    assertThat(pool.replicas().get(0).health()).isEqualTo(ReplicaHealth.UNHEALTHY);
    pool.scraped("a", scrape(100, true), 0);
    pool.scraped("a", scrape(300, false), 1_000_000_000L);
    var r = pool.replicas().get(0);
    assertThat(r.health()).isEqualTo(ReplicaHealth.HEALTHY);
    assertThat(r.address()).isEqualTo("http://h:1");
    assertThat(r.models()).containsEntry("m", ModelState.SLEEPING);
    assertThat(r.load().runningRequests()).isEqualTo(3);
    assertThat(r.load().waitingRequests()).isEqualTo(1);
    assertThat(r.load().kvCapacityTokens()).isEqualTo(1600);
    assertThat(r.load().outputTokensPerSecond()).isEqualTo(200.0);
  }

  @Test
  void aFailedRequestKeepsItUnhealthyForTheCooldownDespiteScrapes() {
    pool.scraped("a", scrape(0, true), now.get());
    var healthy = pool.replicas();
    pool.markFailed("a");
    assertThat(pool.replicas()).isNotSameAs(healthy);
    assertThat(pool.replicas().get(0).health()).isEqualTo(ReplicaHealth.UNHEALTHY);
    pool.scraped("a", scrape(0, true), now.get() + 1_999_000_000L);
    assertThat(pool.replicas().get(0).health()).isEqualTo(ReplicaHealth.UNHEALTHY);
    pool.scraped("a", scrape(0, true), now.get() + 2_000_000_000L);
    assertThat(pool.replicas().get(0).health()).isEqualTo(ReplicaHealth.HEALTHY);
    pool.scrapeFailed("a", true);
    assertThat(pool.replicas().get(0).health()).isEqualTo(ReplicaHealth.UNHEALTHY);
    pool.markFailed("unknown"); // ignored
  }

  @Test
  void slowScrapesCountOnlyWhenTheyRepeat() {
    pool.scraped("a", scrape(0, true), now.get());
    for (int i = 1; i < BackendPool.SCRAPE_FAILURES_TO_UNHEALTHY; i++) {
      pool.scrapeFailed("a", false);
      assertThat(pool.replicas().get(0).health()).isEqualTo(ReplicaHealth.HEALTHY);
    }
    pool.scrapeFailed("a", false);
    assertThat(pool.replicas().get(0).health()).isEqualTo(ReplicaHealth.UNHEALTHY);
    pool.scraped("a", scrape(0, true), now.get() + 1);
    assertThat(pool.replicas().get(0).health()).isEqualTo(ReplicaHealth.HEALTHY);
    pool.scrapeFailed("a", false);
    assertThat(pool.replicas().get(0).health()).as("the count restarts").isEqualTo(ReplicaHealth.HEALTHY);
  }

  @Test
  void unchangedScrapesKeepTheSameList() {
    pool.scraped("a", scrape(0, true), 1);
    pool.scraped("a", scrape(0, true), 2);
    var list = pool.replicas();
    pool.scraped("a", scrape(0, true), 3);
    assertThat(pool.replicas()).isSameAs(list);
  }
}
