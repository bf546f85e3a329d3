package io.affinityrouter.jmh;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/**
 * Runs {@code io.affinityrouter.core.IndexFootprint} in a fresh JVM (so that the heap it measures
 * holds nothing else), under the JVM's default collector (G1), and returns its markdown table.
 */
final class Footprint {
  private Footprint() {}

  /**
   * Runs the footprint measurement at 1M entries.
   *
   * @throws IllegalStateException if it fails or reports a broken bound
   */
  static String run() throws IOException, InterruptedException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p = new ProcessBuilder(List.of(java, "-Xms2g", "-Xmx2g", "-cp",
        System.getProperty("java.class.path"), "io.affinityrouter.core.IndexFootprint", "1000000"))
        .redirectErrorStream(true)
        .start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    int status = p.waitFor();
    if (status != 0) {
      throw new IllegalStateException("IndexFootprint exited with " + status + ":\n" + output);
    }
    return output;
  }
}
