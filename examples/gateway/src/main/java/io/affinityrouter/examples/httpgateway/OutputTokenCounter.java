package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.examples.json.Json;
import io.affinityrouter.examples.json.JsonException;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

/**
 * Counts the output tokens of one proxied response, for {@code RequestLease.complete}: from
 * {@code usage.completion_tokens} when the backend reports it (a whole response, or the final chunk
 * of a stream with {@code stream_options.include_usage}), else one per streamed chunk that carries
 * text (vLLM streams one token per chunk).
 *
 * <p>Streamed bytes arrive in arbitrary pieces: lines are reassembled before they are read; a line
 * longer than {@value #MAX_LINE_BYTES} bytes is skipped. Nothing is logged. Not thread-safe: one
 * counter per response, fed by its relay one piece after another.
 */
final class OutputTokenCounter {
  /** The longest server-sent-event line read; longer ones are skipped: {@value}. */
  static final int MAX_LINE_BYTES = 1 << 20;

  private final ByteArrayOutputStream line = new ByteArrayOutputStream(256);
  private boolean lineTooLong;
  private int chunksWithText;
  private int reported = -1;

  /** The output tokens: the reported usage if any, else the chunks that carried text. */
  int outputTokens() {
    return reported >= 0 ? reported : chunksWithText;
  }

  /** Whether the backend reported a usage. */
  boolean usageReported() {
    return reported >= 0;
  }

  /** Reads a whole (non-streamed) JSON response body. */
  void acceptBody(byte[] body) {
    try {
      Object json = Json.parse(new String(body, StandardCharsets.UTF_8));
      if (json instanceof Map) {
        readUsage((Map<?, ?>) json);
      }
    } catch (JsonException e) {
      // not JSON (an error page): no usage
    }
  }

  /** Reads the next piece of a server-sent-events stream. */
  void acceptStream(byte[] bytes, int offset, int length) {
    for (int i = offset, end = offset + length; i < end; i++) {
      byte b = bytes[i];
      if (b == '\n') {
        if (!lineTooLong) {
          readLine(line.toString(StandardCharsets.UTF_8));
        }
        line.reset();
        lineTooLong = false;
      } else if (line.size() < MAX_LINE_BYTES) {
        line.write(b);
      } else {
        lineTooLong = true;
      }
    }
  }

  private void readLine(String text) {
    if (!text.startsWith("data:")) {
      return;
    }
    String data = text.substring(5).trim();
    if (data.isEmpty() || data.equals("[DONE]")) {
      return;
    }
    Object json;
    try {
      json = Json.parse(data);
    } catch (JsonException e) {
      return;
    }
    if (!(json instanceof Map)) {
      return;
    }
    Map<?, ?> chunk = (Map<?, ?>) json;
    readUsage(chunk);
    if (chunk.get("choices") instanceof List) {
      for (Object choice : (List<?>) chunk.get("choices")) {
        if (choice instanceof Map && carriesText((Map<?, ?>) choice)) {
          chunksWithText++;
        }
      }
    }
  }

  private static boolean carriesText(Map<?, ?> choice) {
    Object text = choice.get("text");
    if (text instanceof String && !((String) text).isEmpty()) {
      return true;
    }
    Object delta = choice.get("delta");
    if (delta instanceof Map) {
      Object content = ((Map<?, ?>) delta).get("content");
      return content instanceof String && !((String) content).isEmpty();
    }
    return false;
  }

  private void readUsage(Map<?, ?> json) {
    Object usage = json.get("usage");
    if (usage instanceof Map) {
      Object tokens = ((Map<?, ?>) usage).get("completion_tokens");
      if (tokens instanceof Long && (Long) tokens >= 0 && (Long) tokens <= Integer.MAX_VALUE) {
        reported = (int) (long) (Long) tokens;
      }
    }
  }
}
