package io.affinityrouter.examples.httpgateway;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** Raw HTTP/1.1 over a socket, for requests no well-behaved client would send. */
final class RawHttp {
  private RawHttp() {}

  /**
   * A response as read off the wire: the status ({@code -1} if the connection ended without one),
   * the head and the body (by {@code Content-Length}, else to the end of the connection).
   */
  record Answer(int status, String head, String body) {
    String header(String name) {
      for (String line : head.split("\r\n")) {
        int colon = line.indexOf(':');
        if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name)) {
          return line.substring(colon + 1).trim();
        }
      }
      return null;
    }
  }

  /** A request line, headers (each {@code "Name: value"}, sent as given) and a body. */
  static byte[] request(String method, String path, String body, String... headers) {
    StringBuilder sb = new StringBuilder(method).append(' ').append(path)
        .append(" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n");
    for (String h : headers) {
      sb.append(h).append("\r\n");
    }
    byte[] b = body.getBytes(StandardCharsets.UTF_8);
    sb.append("Content-Length: ").append(b.length).append("\r\n\r\n").append(body);
    return sb.toString().getBytes(StandardCharsets.ISO_8859_1);
  }

  /**
   * Sends {@code bytes} on a new connection (from another thread, so a server that answers before
   * reading everything is still heard) and reads one answer, waiting at most {@code timeoutMs}.
   */
  static Answer exchange(int port, byte[] bytes, int timeoutMs) throws IOException {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(timeoutMs);
      Thread writer = new Thread(() -> {
        try {
          OutputStream out = s.getOutputStream();
          out.write(bytes);
          out.flush();
        } catch (IOException e) {
          // the server closed early: what it answered is what counts
        }
      }, "raw-writer");
      writer.setDaemon(true);
      writer.start();
      return read(s.getInputStream());
    }
  }

  /** Reads one answer; a connection reset or end before a status gives status {@code -1}. */
  static Answer read(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    try {
      int last4 = 0;
      while (last4 != 0x0d0a0d0a) {
        int c = in.read();
        if (c < 0) {
          break;
        }
        head.write(c);
        last4 = (last4 << 8) | c;
      }
    } catch (SocketTimeoutException e) {
      throw e;
    } catch (IOException e) {
      // reset
    }
    String h = head.toString(StandardCharsets.ISO_8859_1);
    if (!h.startsWith("HTTP/1.1 ") || h.length() < 12) {
      return new Answer(-1, h, "");
    }
    int status = Integer.parseInt(h.substring(9, 12));
    Answer partial = new Answer(status, h, "");
    String length = partial.header("Content-Length");
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    try {
      if (length != null) {
        body.write(in.readNBytes(Integer.parseInt(length)));
      } else if (!"chunked".equals(lower(partial.header("Transfer-Encoding")))) {
        body.write(in.readAllBytes());
      }
    } catch (IOException e) {
      // reset after the head
    }
    return new Answer(status, h, body.toString(StandardCharsets.UTF_8));
  }

  private static String lower(String s) {
    return s == null ? null : s.toLowerCase(Locale.ROOT);
  }
}
