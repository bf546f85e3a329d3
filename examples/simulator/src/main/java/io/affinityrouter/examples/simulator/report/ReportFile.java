package io.affinityrouter.examples.simulator.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Writes a report file in UTF-8, creating its parent folders. Stateless and thread-safe. */
public final class ReportFile {
  private ReportFile() {}

  /**
   * Writes {@code text} to {@code file}.
   *
   * @throws UncheckedIOException if it cannot be written
   */
  public static void write(Path file, String text) {
    try {
      if (file.getParent() != null) {
        Files.createDirectories(file.getParent());
      }
      Files.writeString(file, text, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
