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
 * Reads a Mooncake trace ({@code kvcache-ai/Mooncake}, {@code FAST25-release/traces/}: the
 * conversation and synthetic traces share one schema): one JSON object per line with
 * {@code timestamp} (ms), {@code input_length}, {@code output_length} and {@code hash_ids}, chained
 * prefix-block ids of {@value #BLOCK_TOKENS} tokens each ({@code len(hash_ids) ==
 * ceil(input_length / 512)}; the last block holds the remainder).
 *
 * <p>The trace has no session ids; a session is inferred from the hash chain: a request whose prompt
 * extends an earlier request's prompt (its blocks include that request's last full block, whose
 * chained id implies all the blocks before it; a partial last block changes id when the conversation
 * grows) continues that request's session, the longest such match winning; otherwise it starts a new
 * one. A session's tail is taken by the turn that extends it, so later requests that merely share the
 * same prefix (a common system prompt) start sessions of their own. A match must span at least
 * {@value #MIN_SESSION_BLOCKS} full blocks: every request of the conversation trace begins with the
 * same block (id 0), so a one-block match is no evidence of a session (with one-block matches, the
 * 1,354 requests whose only full block is that one each handed their "session" to the next request
 * that matched nothing deeper, whatever conversation it belonged to). On the conversation trace this
 * gives 8,099 sessions for 12,031 requests. Requests are independent arrivals (open loop) at their
 * timestamps. Stateless and thread-safe.
 */
public final class MooncakeTraceReader {
  /** Tokens per Mooncake hash block. */
  public static final int BLOCK_TOKENS = 512;

  /** Full blocks a request must share with a session's tail to continue it. */
  static final int MIN_SESSION_BLOCKS = 2;

  private MooncakeTraceReader() {}

  /**
   * Reads up to {@code limit} requests.
   *
   * @param file the trace file
   * @param name the workload name
   * @param limit the most requests to read; must be {@code > 0}
   * @throws IllegalArgumentException on a malformed line or a bad limit
   * @throws UncheckedIOException if the file cannot be read
   */
  public static Workload read(Path file, String name, int limit) {
    if (limit <= 0) {
      throw new IllegalArgumentException("limit: " + limit + " (expected: > 0)");
    }
    List<SimRequest> out = new ArrayList<>();
    Map<Long, String> sessionTails = new HashMap<>();
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String line;
      int lineNo = 0;
      while ((line = in.readLine()) != null && out.size() < limit) {
        lineNo++;
        if (line.isBlank()) {
          continue;
        }
        try {
          out.add(parse(JsonLine.parseObject(line), out.size(), sessionTails));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(file + ":" + lineNo + ": " + e.getMessage(), e);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new Workload(name, out);
  }

  private static SimRequest parse(Map<String, Object> o, int index,
      Map<Long, String> sessionTails) {
    long timestampMs = JsonLine.longField(o, "timestamp");
    int input = (int) JsonLine.longField(o, "input_length");
    int output = (int) Math.max(1, JsonLine.longField(o, "output_length"));
    long[] ids = JsonLine.longArray(o.get("hash_ids"), "hash_ids");
    if (ids.length == 0) {
      throw new IllegalArgumentException("hash_ids: [] (expected: at least one block)");
    }
    int[] tokens = new int[ids.length];
    for (int i = 0; i < ids.length; i++) {
      tokens[i] = BLOCK_TOKENS;
    }
    tokens[ids.length - 1] = Math.max(1, input - BLOCK_TOKENS * (ids.length - 1));
    int full = input % BLOCK_TOKENS == 0 ? ids.length : ids.length - 1;
    String session = null;
    for (int i = full - 1; i >= MIN_SESSION_BLOCKS - 1 && session == null; i--) {
      session = sessionTails.remove(ids[i]);
    }
    if (session == null) {
      session = "mc-" + index;
    }
    if (full >= MIN_SESSION_BLOCKS) {
      sessionTails.put(ids[full - 1], session);
    }
    return new SimRequest(index, session, timestampMs * 1_000_000L, ids, tokens, output, -1);
  }
}
