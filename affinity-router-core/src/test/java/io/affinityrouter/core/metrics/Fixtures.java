package io.affinityrouter.core.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The captured {@code /metrics} expositions in {@code shared/fixtures/metrics/} (see its
 * README.txt), read in place by a path relative to the project root. A missing file fails the
 * test that asked for it.
 */
final class Fixtures {
  /** vLLM V0 (~v0.7) capture from the AIBrix docs; its last histogram is truncated. */
  static final String VLLM_V0_AIBRIX = "vllm-v0-aibrix-runtime-doc.prom";
  /** vLLM v0.26.0 (V1 engine) capture from llm-d-router, trimmed to KV-cache families. */
  static final String VLLM_V1_LLMD = "vllm-v1-0.26.0-llmd-router-none.prom";
  /** SGLang's production-metrics docs example, under load. */
  static final String SGLANG_DOCS = "sglang-docs-production-metrics.prom";
  /** SGLang v0.5.16 capture with hierarchical cache, from llm-d-router. */
  static final String SGLANG_HICACHE = "sglang-0.5.16-llmd-router-hicache.prom";
  /** The vllm:* family names and types of vLLM v0.26.0 (not an exposition). */
  static final String VLLM_V0_26_FAMILIES = "vllm-v0.26.0-metric-families.txt";

  static final String[] EXPOSITIONS = {VLLM_V0_AIBRIX, VLLM_V1_LLMD, SGLANG_DOCS, SGLANG_HICACHE};

  private static final Path DIR = Path.of("../../shared/fixtures/metrics");

  private Fixtures() {}

  static String read(String fileName) {
    Path path = DIR.resolve(fileName);
    assertThat(path).as("fixture %s (cwd %s)", path.toAbsolutePath().normalize(),
        Path.of("").toAbsolutePath()).isRegularFile();
    try {
      return Files.readString(path, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
