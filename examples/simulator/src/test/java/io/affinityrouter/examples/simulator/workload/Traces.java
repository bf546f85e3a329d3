package io.affinityrouter.examples.simulator.workload;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Where the real traces are (relative to this module) and the infinite-cache bound over them. */
public final class Traces {
  /**
   * The traces folder, read in place (never copied): {@code ../shared/traces} from the project
   * root, which is two levels above this module ({@code examples/simulator}).
   */
  public static final Path FOLDER = Path.of("../../../shared/traces");

  private Traces() {}

  /**
   * Token-weighted share of prompt segments already seen earlier as a contiguous chain prefix (the
   * figure the traces' README measures).
   */
  public static double infiniteCacheBound(List<SimRequest> requests) {
    Set<Long> seen = new HashSet<>();
    long hit = 0;
    long total = 0;
    for (SimRequest r : requests) {
      long[] keys = r.keys();
      int[] tokens = r.segmentTokens();
      int i = 0;
      while (i < keys.length && seen.contains(keys[i])) {
        hit += tokens[i++];
      }
      for (long k : keys) {
        seen.add(k);
      }
      total += r.inputTokens();
    }
    return (double) hit / total;
  }
}
