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
import org.jspecify.annotations.Nullable;

/**
 * Reads a Mooncake trace ({@code kvcache-ai/Mooncake}, {@code FAST25-release/traces/}: the
 * conversation and synthetic traces share one schema): one JSON object per line with
 * {@code timestamp} (ms), {@code input_length}, {@code output_length} and {@code hash_ids}, chained
 * prefix-block ids of {@value #BLOCK_TOKENS} tokens each ({@code len(hash_ids) ==
 * ceil(input_length / 512)}; the last block holds the remainder).
 *
 * <p>The public traces have no session ids; a session is inferred from the hash chain: a request whose prompt
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
 * timestamps.
 *
 * <p>A line may carry a {@code session_id} (a non-empty string or an integer; JSON {@code null} counts
 * as absent): lines with the same id form one session, whatever their hash chains, named by the id
 * as written ({@code "7"} and {@code 7} are the same session). Such a session is represented as an
 * inferred one is: its turns share the session's name and each arrives at its own timestamp (open
 * loop; not linked as closed-loop follow-ups), so the recorded gaps between turns, which already
 * include the time the previous turn took, are replayed as recorded and compressed like every other
 * arrival. Lines without {@code session_id} keep the inference above among themselves (named
 * {@code mc-N}, N the request's index in the file; explicit ids should not take that form): a line
 * with an id neither continues an inferred session nor leaves a tail for one, so a file may mix
 * both. A user's own file is read with {@link #read(Path, int)}, as a workload named after the file
 * ({@link #workloadName(Path)}). Every field is checked: a missing field, a negative length, a
 * {@code hash_ids} count other than {@code ceil(input_length / 512)} or a {@code session_id} of
 * another type fails with the file and line. Stateless and thread-safe.
 */
public final class MooncakeTraceReader {
  /** Tokens per Mooncake hash block. */
  public static final int BLOCK_TOKENS = 512;

  /** Full blocks a request must share with a session's tail to continue it. */
  static final int MIN_SESSION_BLOCKS = 2;

  private MooncakeTraceReader() {}

  /**
   * Reads up to {@code limit} requests of a Mooncake-format file as a workload named after the file
   * ({@link #workloadName(Path)}).
   *
   * @param file the trace file
   * @param limit the most requests to read; must be {@code > 0}
   * @throws IllegalArgumentException on a malformed line (its message starts with
   *     {@code file:line:}) or a bad limit
   * @throws UncheckedIOException if the file cannot be read
   */
  public static Workload read(Path file, int limit) {
    return read(file, workloadName(file), limit);
  }

  /**
   * The workload name of a trace file: its file name without a {@code .jsonl} ending
   * ({@code traces/agent_trace.jsonl} gives {@code agent_trace}).
   *
   * @throws IllegalArgumentException if the path has no file name, or nothing but {@code .jsonl}
   */
  public static String workloadName(Path file) {
    Path fileName = file.getFileName();
    String name = fileName == null ? "" : fileName.toString();
    if (name.endsWith(".jsonl")) {
      name = name.substring(0, name.length() - ".jsonl".length());
    }
    if (name.isEmpty()) {
      throw new IllegalArgumentException("file: " + file + " (expected: a file name)");
    }
    return name;
  }

  /**
   * Reads up to {@code limit} requests.
   *
   * @param file the trace file
   * @param name the workload name
   * @param limit the most requests to read; must be {@code > 0}
   * @throws IllegalArgumentException on a malformed line (its message starts with
   *     {@code file:line:}) or a bad limit
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
    present(o, "timestamp", "an integer, milliseconds");
    long timestampMs = JsonLine.longField(o, "timestamp");
    if (timestampMs < 0) {
      throw new IllegalArgumentException("timestamp: " + timestampMs + " (expected: >= 0)");
    }
    int input = intField(o, "input_length", 1);
    // a zero-length output is generated as one token (the engine always samples one)
    int output = Math.max(1, intField(o, "output_length", 0));
    long[] ids = JsonLine.longArray(present(o, "hash_ids", "an array of integers"), "hash_ids");
    if (ids.length == 0) {
      throw new IllegalArgumentException("hash_ids: [] (expected: at least one block)");
    }
    int blocks = (input + BLOCK_TOKENS - 1) / BLOCK_TOKENS;
    if (ids.length != blocks) {
      throw new IllegalArgumentException("hash_ids: " + ids.length + " blocks for input_length "
          + input + " (expected: ceil(" + input + " / " + BLOCK_TOKENS + ") = " + blocks + ")");
    }
    int[] tokens = new int[ids.length];
    for (int i = 0; i < ids.length; i++) {
      tokens[i] = BLOCK_TOKENS;
    }
    tokens[ids.length - 1] = input - BLOCK_TOKENS * (ids.length - 1);
    @Nullable String session = sessionId(o.get("session_id"));
    if (session == null) {
      session = inferSession(ids, input, index, sessionTails);
    }
    return new SimRequest(index, session, timestampMs * 1_000_000L, ids, tokens, output, -1);
  }

  /** The session a line without {@code session_id} continues (see the class comment), or a new one. */
  private static String inferSession(long[] ids, int input, int index,
      Map<Long, String> sessionTails) {
    int full = input % BLOCK_TOKENS == 0 ? ids.length : ids.length - 1;
    @Nullable String session = null;
    for (int i = full - 1; i >= MIN_SESSION_BLOCKS - 1 && session == null; i--) {
      session = sessionTails.remove(ids[i]);
    }
    if (session == null) {
      session = "mc-" + index;
    }
    if (full >= MIN_SESSION_BLOCKS) {
      sessionTails.put(ids[full - 1], session);
    }
    return session;
  }

  /** A {@code session_id} value as a session name, or null when the line has none. */
  private static @Nullable String sessionId(@Nullable Object v) {
    if (v == null) {
      return null;
    }
    if (v instanceof Long) {
      return v.toString();
    }
    if (v instanceof String && !((String) v).isEmpty()) {
      return (String) v;
    }
    String shown = v instanceof String ? "\"\"" : v.toString();
    throw new IllegalArgumentException(
        "session_id: " + shown + " (expected: a non-empty string or an integer)");
  }

  private static Object present(Map<String, Object> o, String name, String expected) {
    Object v = o.get(name);
    if (v == null) {
      throw new IllegalArgumentException(name + ": missing (expected: " + expected + ")");
    }
    return v;
  }

  private static int intField(Map<String, Object> o, String name, int min) {
    present(o, name, "an integer >= " + min);
    long v = JsonLine.longField(o, name);
    if (v < min || v > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(name + ": " + v + " (expected: an integer >= " + min
          + " and <= " + Integer.MAX_VALUE + ")");
    }
    return (int) v;
  }
}
