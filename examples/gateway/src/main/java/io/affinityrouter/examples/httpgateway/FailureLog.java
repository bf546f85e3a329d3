package io.affinityrouter.examples.httpgateway;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One log line per failed request, in {@code key=value} form (logfmt): status, error code, method,
 * path, replica and routing reason when routed, a hash of the session id, the client's address,
 * the time taken and the message. Never the prompt, nor the session id itself: request bodies are
 * not logged, header values only as a hash. Client-chosen strings are truncated and escaped, so a
 * line stays one line. Logged at {@code WARN} for {@code 5xx}, {@code INFO} otherwise, to the
 * logger {@value #LOGGER}. Thread-safe.
 */
final class FailureLog {
  /** The logger's name: {@value}. */
  static final String LOGGER = "io.affinityrouter.examples.httpgateway.requests";
  private static final int MAX_VALUE_CHARS = 200;
  private static final Logger LOG = LoggerFactory.getLogger(LOGGER);

  private FailureLog() {}

  /** One failed request; {@code null} fields are written as {@code -}. */
  static void failed(int status, String code, String method, String path, String replica,
      String reason, String session, String remote, long durationNanos, String message) {
    if (!(status >= 500 ? LOG.isWarnEnabled() : LOG.isInfoEnabled())) {
      return;
    }
    StringBuilder sb = new StringBuilder(256).append("request failed");
    field(sb, "status", Integer.toString(status));
    field(sb, "code", code);
    field(sb, "method", method);
    field(sb, "path", path);
    field(sb, "replica", replica);
    field(sb, "reason", reason);
    field(sb, "session_hash", session == null ? null : hash(session));
    field(sb, "remote", remote);
    field(sb, "duration_ms", Long.toString(Math.max(0, durationNanos) / 1_000_000));
    field(sb, "message", message);
    if (status >= 500) {
      LOG.warn(sb.toString());
    } else {
      LOG.info(sb.toString());
    }
  }

  /** The first 8 bytes of the SHA-256 of {@code s}, in hex: enough to correlate lines. */
  static String hash(String s) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every JVM", e);
    }
  }

  private static void field(StringBuilder sb, String key, String value) {
    sb.append(' ').append(key).append('=');
    if (value == null) {
      sb.append('-');
      return;
    }
    String v = value.length() > MAX_VALUE_CHARS
        ? value.substring(0, MAX_VALUE_CHARS) + "..." : value;
    boolean quote = v.isEmpty() || v.chars().anyMatch(c -> c <= ' ' || c == '"' || c == '=');
    if (quote) {
      sb.append('"');
    }
    for (int i = 0; i < v.length(); i++) {
      char c = v.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c < 0x20 || c == 0x7f) {
        sb.append(String.format("\\x%02x", (int) c));
      } else {
        sb.append(c);
      }
    }
    if (quote) {
      sb.append('"');
    }
  }
}
