package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class GatewayConfigTest {

  @Test
  void readsTheCommandLine() {
    GatewayConfig c = GatewayConfig.fromArgs(new String[] {"--listen", "127.0.0.1:9090",
        "--backend", "a=http://127.0.0.1:8001", "--backend=b=http://127.0.0.1:8002",
        "--redis", "redis://127.0.0.1:6379", "--session-header", "x-conv",
        "--scrape-interval-ms", "50", "--max-in-flight", "64", "--response-timeout-ms", "1500",
        "--store-timeout-ms", "80"});
    assertThat(c.listen().getPort()).isEqualTo(9090);
    assertThat(c.backends()).containsExactly(
        java.util.Map.entry("a", URI.create("http://127.0.0.1:8001")),
        java.util.Map.entry("b", URI.create("http://127.0.0.1:8002")));
    assertThat(c.redisUri()).contains("redis://127.0.0.1:6379");
    assertThat(c.sessionHeader()).isEqualTo("x-conv");
    assertThat(c.tenantHeader()).isEqualTo(GatewayConfig.DEFAULT_TENANT_HEADER);
    assertThat(c.scrapeInterval()).isEqualTo(Duration.ofMillis(50));
    assertThat(c.maxInFlightPerBackend()).isEqualTo(64);
    assertThat(c.responseTimeout()).isEqualTo(Duration.ofMillis(1500));
    assertThat(c.storeTimeout()).isEqualTo(Duration.ofMillis(80));
  }

  @Test
  void readsTheLimitsWithTheirDefaults() {
    GatewayConfig d = GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1"});
    assertThat(d.headerTimeout()).isEqualTo(GatewayConfig.DEFAULT_HEADER_TIMEOUT)
        .isEqualTo(Duration.ofSeconds(10));
    assertThat(d.bodyTimeout()).isEqualTo(Duration.ofSeconds(30));
    assertThat(d.idleTimeout()).isEqualTo(Duration.ofSeconds(60));
    assertThat(d.maxHeaderBytes()).isEqualTo(16_384);
    assertThat(d.maxHeaders()).isEqualTo(100);
    assertThat(d.maxThreads()).isEqualTo(200);
    GatewayConfig c = GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--header-timeout-ms", "2000", "--body-timeout-ms", "3000", "--idle-timeout-ms", "4000",
        "--max-header-bytes", "8192", "--max-headers", "50", "--max-threads", "16"});
    assertThat(c.headerTimeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(c.bodyTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(c.idleTimeout()).isEqualTo(Duration.ofSeconds(4));
    assertThat(c.maxHeaderBytes()).isEqualTo(8192);
    assertThat(c.maxHeaders()).isEqualTo(50);
    assertThat(c.maxThreads()).isEqualTo(16);
    assertThatThrownBy(() -> GatewayConfig.builder().maxHeaderBytes(100))
        .hasMessage("maxHeaderBytes: 100 (expected: 1024..1048576)");
    assertThatThrownBy(() -> GatewayConfig.builder().maxHeaders(0))
        .hasMessage("maxHeaders: 0 (expected: > 0)");
    assertThatThrownBy(() -> GatewayConfig.builder().maxThreads(2))
        .hasMessage("maxThreads: 2 (expected: >= 8)");
    assertThatThrownBy(() -> GatewayConfig.builder().headerTimeout(Duration.ZERO))
        .hasMessage("headerTimeout: PT0S (expected: > 0)");
  }

  @Test
  void refusesBadInput() {
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--listen", "x:1"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("backends: none (expected: at least one id=url)");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "nourl"}))
        .hasMessage("--backend: nourl (expected: id=url)");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend",
        "a=ftp://h:1"})).hasMessage("backend a: ftp://h:1 (expected: http://host:port)");
    assertThatThrownBy(() -> GatewayConfig.builder().backend("a", URI.create("http://h:1"))
        .backend("a", URI.create("http://h:2"))).hasMessage("backend: a (expected: a unique id)");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--listen", "nohost",
        "--backend", "a=http://h:1"})).hasMessage("--listen: nohost (expected: host:port)");
    assertThatThrownBy(() -> GatewayConfig.builder().scrapeInterval(Duration.ZERO))
        .hasMessage("scrapeInterval: PT0S (expected: > 0)");
    assertThatThrownBy(() -> GatewayConfig.builder().maxInFlightPerBackend(0))
        .hasMessage("maxInFlightPerBackend: 0 (expected: > 0)");
  }

  @Test
  void readsTheTokenizerAndTheKvEventPublishers() {
    GatewayConfig d = GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1"});
    assertThat(d.tokenization()).isEqualTo(GatewayConfig.Tokenization.TEXT);
    assertThat(d.kvEvents()).isEmpty();
    GatewayConfig c = GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--backend", "b=http://h:2", "--tokenizer", "engine",
        "--kv-events", "a=tcp://h:5557,replay=tcp://h:5558", "--kv-events", "b=tcp://h:6557"});
    assertThat(c.tokenization()).isEqualTo(GatewayConfig.Tokenization.ENGINE);
    assertThat(c.kvEvents()).containsExactly(
        java.util.Map.entry("a", new GatewayConfig.KvEvents(URI.create("tcp://h:5557"),
            java.util.Optional.of(URI.create("tcp://h:5558")))),
        java.util.Map.entry("b", new GatewayConfig.KvEvents(URI.create("tcp://h:6557"),
            java.util.Optional.empty())));

    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--tokenizer", "hf"})).hasMessage("--tokenizer: hf (expected: text, engine or local)");
    GatewayConfig local = GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--tokenizer", "local", "--tokenizer-model", "m1=/models/one",
        "--tokenizer-model", "m2=/models/two"});
    assertThat(local.tokenization()).isEqualTo(GatewayConfig.Tokenization.LOCAL);
    assertThat(local.tokenizerModels()).containsExactly(
        java.util.Map.entry("m1", java.nio.file.Path.of("/models/one")),
        java.util.Map.entry("m2", java.nio.file.Path.of("/models/two")));
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--tokenizer", "local"})).hasMessage("tokenization: LOCAL without tokenizer models "
            + "(expected: at least one tokenizerModel)");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--tokenizer-model", "m=/x"})).hasMessage(
            "tokenizerModels: given with tokenization TEXT (expected: LOCAL)");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--tokenizer", "local", "--tokenizer-model", "/x"})).hasMessage("--tokenizer-model: /x "
            + "(expected: model=DIR, DIR holding tokenizer.json and tokenizer_config.json)");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--tokenizer", "local", "--tokenizer-model", "m=/x", "--tokenizer-model", "m=/y"}))
        .hasMessage("tokenizerModel: m given twice");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--kv-events", "b=tcp://h:5557"})).hasMessage("kvEvents: b (expected: a backend's id)");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--kv-events", "a=http://h:5557"}))
        .hasMessage("--kv-events: a=http://h:5557: publisher: http://h:5557"
            + " (expected: tcp://host:port)");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--kv-events", "a=tcp://h:1,tcp://h:2"}))
        .hasMessage("--kv-events: a=tcp://h:1,tcp://h:2"
            + " (expected: id=tcp://host:port[,replay=tcp://host:port])");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--kv-events", "a=tcp://h:1", "--kv-events", "a=tcp://h:2"}))
        .hasMessage("--kv-events: a=tcp://h:2: kvEvents: a (expected: one publisher per backend)");
  }
}
