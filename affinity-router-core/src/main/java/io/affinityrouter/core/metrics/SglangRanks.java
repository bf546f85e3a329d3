package io.affinityrouter.core.metrics;

import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Keeps one series per SGLang data-parallel replica. SGLang's schedulers label their series with
 * {@code tp_rank}, {@code pp_rank} and {@code moe_ep_rank} ({@code
 * python/sglang/srt/metrics/collector.py}); with {@code --enable-metrics-for-all-schedulers} every
 * rank of one replica reports the same batch and pool, so summing them would multiply running,
 * queue and capacity by the parallel size. Of the series that differ only in those labels, the
 * lowest rank's is kept (pipeline rank first, numerically); {@code dp_rank} is kept as a label, so
 * the replicas still add up.
 *
 * <p>Not thread-safe: one instance reads one exposition.
 */
final class SglangRanks {
  private static final List<String> RANK_LABELS = List.of("pp_rank", "tp_rank", "moe_ep_rank");

  private final Map<SeriesKey, MetricSample> lowest = new LinkedHashMap<>();
  private int repeats;

  /** Offers a sample of an SGLang family. */
  void offer(MetricSample sample) {
    Map<String, String> replica = new HashMap<>(sample.labels());
    replica.keySet().removeAll(RANK_LABELS);
    SeriesKey key = new SeriesKey(sample.name(), replica);
    MetricSample kept = lowest.get(key);
    if (kept == null) {
      lowest.put(key, sample);
      return;
    }
    int order = compareRanks(sample, kept);
    if (order == 0) {
      repeats++; // the same series twice, not another rank's copy
    } else if (order < 0) {
      lowest.put(key, sample);
    }
  }

  /** The samples kept, one per replica and series, in the order their series first came. */
  Collection<MetricSample> samples() {
    return lowest.values();
  }

  /** Samples offered again with the very labels of one kept. */
  int repeats() {
    return repeats;
  }

  private static int compareRanks(MetricSample a, MetricSample b) {
    for (String label : RANK_LABELS) {
      String x = a.labels().getOrDefault(label, "");
      String y = b.labels().getOrDefault(label, "");
      int order = x.length() != y.length() ? Integer.compare(x.length(), y.length())
          : x.compareTo(y); // shorter first, so "2" sorts before "10"
      if (order != 0) {
        return order;
      }
    }
    return 0;
  }

  /** A series without its rank labels. */
  private record SeriesKey(String name, Map<String, String> labels) {}
}
