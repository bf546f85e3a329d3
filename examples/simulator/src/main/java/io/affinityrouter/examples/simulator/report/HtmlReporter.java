package io.affinityrouter.examples.simulator.report;

import io.affinityrouter.examples.simulator.engine.RunResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Writes an HTML report (placeholder until the charts are written: the table as preformatted text). */
public final class HtmlReporter {
  private HtmlReporter() {}

  /** Writes the report. */
  public static void write(List<RunResult> results, Path file) {
    try {
      if (file.getParent() != null) {
        Files.createDirectories(file.getParent());
      }
      Files.writeString(file, "<!doctype html><pre>" + TableReporter.format(results)
          .replace("&", "&amp;").replace("<", "&lt;") + "</pre>", StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
