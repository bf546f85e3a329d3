package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.affinityrouter.examples.fakevllm.FakeVllmConfig;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The gateway as the official {@code openai} Python client sees it ({@code
 * src/test/python/openai_client_check.py}): {@code models.list()}, a chat completion, a stream with
 * and without {@code include_usage}, and {@code NotFoundError} with {@code model_not_found} for an
 * unknown model.
 *
 * <p>The interpreter is {@value #PYTHON_ENV} (a venv with {@code openai} installed). Without it the
 * test is skipped, except under CI ({@code CI=true}), where it fails: CI must run it.
 */
class GatewayOpenAiClientTest {
  /** The environment variable naming a Python interpreter that can {@code import openai}. */
  static final String PYTHON_ENV = "OPENAI_CLIENT_PYTHON";

  @Test
  void theOfficialPythonClientListsModelsChatsStreamsAndGetsNotFound() throws Exception {
    String python = System.getenv(PYTHON_ENV);
    boolean ci = "true".equals(System.getenv("CI"));
    if (!ci) {
      assumeTrue(python != null && !python.isBlank(), PYTHON_ENV + " is not set");
    }
    assertThat(python).as(PYTHON_ENV + " must name a Python with openai installed in CI")
        .isNotBlank();
    Path script = Path.of("src/test/python/openai_client_check.py").toAbsolutePath();
    assertThat(script).exists();
    try (TestFleet fleet = TestFleet.start(2, FakeVllmConfig.builder().latencyScale(0))) {
      Gateway g = fleet.gateway(fleet.config(), null);
      Path log = Files.createTempFile("openai-client", ".log");
      Process p = new ProcessBuilder(python, script.toString(), g.baseUrl(), TestFleet.MODEL)
          .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      boolean exited = p.waitFor(180, TimeUnit.SECONDS);
      if (!exited) {
        p.destroyForcibly();
      }
      String out = Files.readString(log, StandardCharsets.UTF_8);
      Files.deleteIfExists(log);
      assertThat(exited).as("the client finished: %s", out).isTrue();
      assertThat(p.exitValue()).as(out).isZero();
      assertThat(out).contains("models ['" + TestFleet.MODEL + "']").endsWith("ok\n");
      assertThat(TestFleet.await(() -> g.openLeases() == 0)).isTrue();
    }
  }
}
