package io.affinityrouter.core.metrics;

import io.affinityrouter.core.tokenizer.TokenizerReference;
import io.affinityrouter.spi.ReplicaEndpoint.Engine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each captured exposition served again as OpenMetrics text by {@code prometheus_client} itself
 * ({@code src/test/python/openmetrics_reference.py}: the library's parser, then its OpenMetrics
 * exposition, which writes {@code vllm_}/{@code sglang_} for the colons and ends with
 * {@code # EOF}), read strictly, gives the same engine metrics as the Prometheus text. Python is
 * the tokenizer reference's ({@code .ci/run} installs prometheus_client beside transformers);
 * without it the test fails when {@code CI=true}, and is skipped elsewhere.
 */
class OpenMetricsReferenceTest {
  @ParameterizedTest
  @ValueSource(strings = {Fixtures.VLLM_V0_AIBRIX, Fixtures.VLLM_V1_LLMD, Fixtures.SGLANG_DOCS,
      Fixtures.SGLANG_HICACHE})
  void theOpenMetricsFormOfEachCaptureReadsAsItsPrometheusText(String fixture) throws Exception {
    String prometheus = Fixtures.read(fixture);
    String openMetrics = openMetrics(fixture);
    assertThat(openMetrics).endsWith("# EOF\n").containsPattern("(?m)^(vllm|sglang)_");

    EngineMetrics expected = EngineMetrics.parse(prometheus);
    EngineMetrics actual = EngineMetrics.parseStrict(openMetrics);
    assertThat(actual.engine()).isEqualTo(expected.engine()).isNotEqualTo(Engine.UNKNOWN);
    assertThat(actual.models()).isEqualTo(expected.models());
    assertThat(actual.replicaLoad()).isEqualTo(expected.replicaLoad());
    assertThat(actual.modelStates()).isEqualTo(expected.modelStates());
  }

  private static String openMetrics(String fixture) throws Exception {
    String python = TokenizerReference.python();
    Process process;
    try {
      process = new ProcessBuilder(python,
          Path.of("src", "test", "python", "openmetrics_reference.py").toString(),
          Path.of("../../shared/fixtures/metrics", fixture).toString())
          .redirectError(ProcessBuilder.Redirect.DISCARD).start();
    } catch (IOException e) {
      TokenizerReference.require(false, python + ": " + e.getMessage());
      throw e;
    }
    process.getOutputStream().close();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(2, TimeUnit.MINUTES)) {
      process.destroyForcibly();
    }
    TokenizerReference.require(process.exitValue() == 0 && !out.isEmpty(),
        python + " with prometheus_client (exit " + process.exitValue() + ")");
    return out;
  }
}
