package io.affinityrouter.examples.simulator.workload;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the RAGPulse trace ({@code flashserve/RAGPulse}, {@code data/}): {@code 0_trace.jsonl} has
 * one request a line with {@code session_id}, {@code timestamp} (seconds, as a string),
 * {@code input_length}, {@code output_length} and {@code hash_ids} grouped by component; the side
 * files {@code 1_sys_prompt.jsonl} … {@code 5_web_search.jsonl} give each component id's
 * {@code token_length}.
 *
 * <p>A prompt is the components in the order system prompt → passages → history → web search → user
 * input (as the traces' README measures it), each id one segment of its own token length, chained so
 * that a component id counts as cached only after the same preceding chain. The few tokens of
 * {@code input_length} that no component accounts for (6 to 12 a request: the chat template) form a
 * last segment unique to the request. Component ids are namespaced by component. Open loop: each
 * request arrives at its timestamp (the trace spans a week; compress it with
 * {@link Workload#compressed(double)}). Stateless and thread-safe.
 */
public final class RagPulseTraceReader {
  private static final String[] COMPONENTS =
      {"sys_prompt", "passages_ids", "history", "web_search", "user_input"};
  private static final String[][] SIDE_FILES = {
      {"1_sys_prompt.jsonl", "sys_prompt_id"},
      {"2_passages.jsonl", "passage_id"},
      {"3_history.jsonl", "history_id"},
      {"5_web_search.jsonl", "web_search_id"},
      {"4_user_input.jsonl", "user_input_id"}};

  private RagPulseTraceReader() {}

  /**
   * Reads up to {@code limit} requests from the trace folder.
   *
   * @throws IllegalArgumentException on a malformed line, an id missing from its side file, or a bad
   *     limit
   * @throws UncheckedIOException if a file cannot be read
   */
  public static Workload read(Path folder, String name, int limit) {
    if (limit <= 0) {
      throw new IllegalArgumentException("limit: " + limit + " (expected: > 0)");
    }
    List<Map<Long, Integer>> lengths = new ArrayList<>();
    for (String[] side : SIDE_FILES) {
      Map<Long, Integer> m = new HashMap<>();
      forEachLine(folder.resolve(side[0]), o ->
          m.put(JsonLine.longField(o, side[1]), (int) JsonLine.longField(o, "token_length")));
      lengths.add(m);
    }
    List<SimRequest> out = new ArrayList<>();
    forEachLine(folder.resolve("0_trace.jsonl"), o -> {
      if (out.size() < limit) {
        out.add(parse(o, out.size(), lengths));
      }
    });
    return new Workload(name, out);
  }

  @SuppressWarnings("unchecked")
  private static SimRequest parse(Map<String, Object> o, int index,
      List<Map<Long, Integer>> lengths) {
    Map<String, Object> groups = (Map<String, Object>) o.get("hash_ids");
    if (groups == null) {
      throw new IllegalArgumentException("hash_ids: missing (expected: an object of components)");
    }
    List<Long> ids = new ArrayList<>();
    List<Integer> tokens = new ArrayList<>();
    int sum = 0;
    for (int c = 0; c < COMPONENTS.length; c++) {
      long[] raw = JsonLine.longArray(groups.getOrDefault(COMPONENTS[c], List.of()),
          COMPONENTS[c]);
      for (long id : raw) {
        Integer len = lengths.get(c).get(id);
        if (len == null) {
          throw new IllegalArgumentException(
              COMPONENTS[c] + ": id " + id + " (expected: listed in " + SIDE_FILES[c][0] + ")");
        }
        if (len > 0) {
          ids.add(((long) (c + 1) << 40) | id);
          tokens.add(len);
          sum += len;
        }
      }
    }
    int input = (int) JsonLine.longField(o, "input_length");
    if (input > sum || ids.isEmpty()) {
      ids.add((7L << 40) | index);
      tokens.add(Math.max(1, input - sum));
    }
    long[] idArray = ids.stream().mapToLong(Long::longValue).toArray();
    int[] tokenArray = tokens.stream().mapToInt(Integer::intValue).toArray();
    Object session = o.get("session_id");
    long seconds = JsonLine.longField(o, "timestamp");
    int output = (int) Math.max(1, JsonLine.longField(o, "output_length"));
    return new SimRequest(index, session == null ? null : session.toString(),
        seconds * 1_000_000_000L, idArray, tokenArray, output, -1);
  }

  private interface LineHandler {
    void accept(Map<String, Object> object);
  }

  private static void forEachLine(Path file, LineHandler handler) {
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String line;
      int lineNo = 0;
      while ((line = in.readLine()) != null) {
        lineNo++;
        if (line.isBlank()) {
          continue;
        }
        try {
          handler.accept(JsonLine.parseObject(line));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(file + ":" + lineNo + ": " + e.getMessage(), e);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
