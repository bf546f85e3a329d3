package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.core.lifecycle.ModelClaim;
import io.affinityrouter.core.lifecycle.ModelLifecycle;
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

  @Test
  void readsModelClaimsGpuMemoryAndGrouping() {
    GatewayConfig d = GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1"});
    assertThat(d.claims()).isEmpty();
    assertThat(d.gpuMemoryBytes()).isEmpty();
    assertThat(d.gpuGrouping()).isEqualTo(GatewayConfig.GpuGrouping.REPLICA);
    assertThat(d.wakeCooldown()).isEqualTo(ModelLifecycle.DEFAULT_WAKE_COOLDOWN);
    assertThat(d.lifecycleInterval()).isEqualTo(ModelLifecycle.DEFAULT_INTERVAL);
    assertThat(d.gatewayId()).isEmpty();

    GatewayConfig c = GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h1:1",
        "--backend", "b=http://h1:2", "--backend", "c=http://h2:1",
        "--claim", "model=qwen,memory=30GiB,min=1,max=4,idle=5m,level=2",
        "--claim=model=llama,memory=1.5TiB", "--claim", "model=tiny,memory=512MiB,idle=1500ms",
        "--gpu-memory", "80GiB", "--gpu-memory", "h2=2TiB", "--gpu-group", "host",
        "--wake-cooldown-ms", "0", "--lifecycle-interval-ms", "250", "--gateway-id", "gw-1"});
    assertThat(c.claims()).containsExactly(
        ModelClaim.builder("qwen").gpuMemoryBytes(30L << 30).minAwake(1).maxAwake(4)
            .idleTimeout(Duration.ofMinutes(5)).sleepLevel(2).build(),
        ModelClaim.builder("llama").gpuMemoryBytes(3L << 39).build(),
        ModelClaim.builder("tiny").gpuMemoryBytes(512L << 20)
            .idleTimeout(Duration.ofMillis(1500)).build());
    assertThat(c.claims().get(1).minAwake()).isZero();
    assertThat(c.claims().get(1).maxAwake()).isEqualTo(Integer.MAX_VALUE);
    assertThat(c.claims().get(1).idleTimeout()).isEqualTo(ModelClaim.DEFAULT_IDLE_TIMEOUT);
    assertThat(c.claims().get(1).sleepLevel()).isEqualTo(1);
    assertThat(c.gpuMemoryBytes()).hasValue(80L << 30);
    assertThat(c.groupGpuMemoryBytes()).containsExactly(java.util.Map.entry("h2", 2L << 40));
    assertThat(c.gpuGrouping()).isEqualTo(GatewayConfig.GpuGrouping.HOST);
    assertThat(c.wakeCooldown()).isZero();
    assertThat(c.lifecycleInterval()).isEqualTo(Duration.ofMillis(250));
    assertThat(c.gatewayId()).contains("gw-1");

    // per replica, every replica named: no default needed
    GatewayConfig named = GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--claim", "model=m,memory=1073741824", "--gpu-memory", "a=24GiB"});
    assertThat(named.claims().get(0).gpuMemoryBytes()).isEqualTo(1L << 30);
    assertThat(named.gpuMemoryBytes()).isEmpty();
    assertThat(named.groupGpuMemoryBytes()).containsExactly(java.util.Map.entry("a", 24L << 30));
  }

  @Test
  void refusesBadClaimsAndGpuMemory() {
    assertThatThrownBy(() -> claim("model=m,memory=-1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--claim model=m,memory=-1: claim memory: -1 (expected: > 0)");
    assertThatThrownBy(() -> claim("model=m,memory=0GiB"))
        .hasMessage("--claim model=m,memory=0GiB: claim memory: 0GiB (expected: > 0)");
    assertThatThrownBy(() -> claim("model=m,memory=30GB")).hasMessage("--claim model=m,"
        + "memory=30GB: claim memory: 30GB (expected: a size such as 30GiB, 512MiB or 1073741824)");
    assertThatThrownBy(() -> claim("model=m")).hasMessage(
        "--claim model=m: claim memory: missing (expected: memory=SIZE, e.g. 30GiB)");
    assertThatThrownBy(() -> claim("memory=1GiB")).hasMessage(
        "--claim memory=1GiB: claim model: missing (expected: model=NAME)");
    assertThatThrownBy(() -> claim("model=,memory=1GiB")).hasMessage(
        "--claim model=,memory=1GiB: claim model: blank (expected: model=NAME)");
    assertThatThrownBy(() -> claim("model=m,memory=1GiB,min=-1")).hasMessage(
        "--claim model=m,memory=1GiB,min=-1: claim min: -1 (expected: >= 0)");
    assertThatThrownBy(() -> claim("model=m,memory=1GiB,max=0")).hasMessage(
        "--claim model=m,memory=1GiB,max=0: claim max: 0 (expected: > 0)");
    assertThatThrownBy(() -> claim("model=m,memory=1GiB,min=x")).hasMessage(
        "--claim model=m,memory=1GiB,min=x: claim min: x (expected: a whole number)");
    assertThatThrownBy(() -> claim("model=m,memory=1GiB,min=5,max=4")).hasMessage(
        "--claim model=m,memory=1GiB,min=5,max=4: claim min: 5 (expected: <= max 4)");
    assertThatThrownBy(() -> claim("model=m,memory=1GiB,idle=0s")).hasMessage(
        "--claim model=m,memory=1GiB,idle=0s: claim idle: 0s (expected: > 0)");
    assertThatThrownBy(() -> claim("model=m,memory=1GiB,idle=5")).hasMessage(
        "--claim model=m,memory=1GiB,idle=5: claim idle: 5"
            + " (expected: a duration such as 1500ms, 30s, 5m or 1h)");
    assertThatThrownBy(() -> claim("model=m,memory=1GiB,level=3")).hasMessage(
        "--claim model=m,memory=1GiB,level=3: claim level: 3 (expected: 1 or 2)");
    assertThatThrownBy(() -> claim("model=m,memory=1GiB,size=2")).hasMessage(
        "--claim model=m,memory=1GiB,size=2: size"
            + " (expected: model=NAME,memory=SIZE[,min=N][,max=N][,idle=DURATION][,level=1|2])");
    assertThatThrownBy(() -> claim("model=m,memory=1GiB,min=1,min=2")).hasMessage(
        "--claim model=m,memory=1GiB,min=1,min=2: min given twice");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--gpu-memory", "8GiB", "--claim", "model=m,memory=1GiB",
        "--claim", "model=m,memory=2GiB"}))
        .hasMessage("claim: m claimed twice (expected: one claim per model)");

    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--claim", "model=m,memory=1GiB"})).hasMessage("gpuMemory: not set for group a"
            + " (expected: --gpu-memory SIZE, or --gpu-memory a=SIZE, with claims)");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--gpu-memory", "8GiB"}))
        .hasMessage("gpuMemory: given without claims (expected: at least one --claim)");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--claim", "model=m,memory=1GiB", "--gpu-memory", "-5GiB"}))
        .hasMessage("--gpu-memory: -5GiB (expected: > 0)");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--claim", "model=m,memory=1GiB", "--gpu-memory", "8GiB", "--gpu-memory", "9GiB"}))
        .hasMessage("--gpu-memory: 9GiB"
            + " (expected: one SIZE for every group, and GROUP=SIZE for others)");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--claim", "model=m,memory=1GiB", "--gpu-memory", "b=8GiB"}))
        .hasMessage("gpuMemory: group b (expected: a backend's id, one of [a])");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--claim", "model=m,memory=1GiB", "--gpu-memory", "a=8GiB", "--gpu-group", "host"}))
        .hasMessage("gpuMemory: group a (expected: a backend's host, one of [h])");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--claim", "model=m,memory=1GiB", "--gpu-memory", "8GiB", "--gpu-group", "gpu"}))
        .hasMessage("--gpu-group: gpu (expected: replica or host)");
    assertThatThrownBy(() -> GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--claim", "model=m,memory=16GiB", "--gpu-memory", "8GiB"}))
        .hasMessage("claim m: memory 17179869184 B"
            + " (expected: <= the largest group's GPU memory, 8589934592 B)");
    assertThatThrownBy(() -> GatewayConfig.builder().wakeCooldown(Duration.ofSeconds(-1)))
        .hasMessage("wakeCooldown: PT-1S (expected: >= 0)");
    assertThatThrownBy(() -> GatewayConfig.builder().lifecycleInterval(Duration.ZERO))
        .hasMessage("lifecycleInterval: PT0S (expected: > 0)");
  }

  private static GatewayConfig claim(String claim) {
    return GatewayConfig.fromArgs(new String[] {"--backend", "a=http://h:1",
        "--gpu-memory", "80GiB", "--claim", claim});
  }
}
