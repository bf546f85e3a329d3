package io.affinityrouter.examples.httpgateway;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;

/**
 * The checks on a request's header fields before anything is routed or forwarded, and the fields
 * forwarded to the backend. The server already bounds the header block's size and parses CR and
 * LF as line ends; here: the number of fields, and no control character in a value (RFC 9110
 * §5.5: visible characters, space and tab), so nothing reaches a backend that its client would
 * refuse or split.
 */
final class RequestHeaders {
  /**
   * Headers not copied between client and backend: hop-by-hop ones (RFC 9110 §7.6.1), those the
   * JDK's client sets itself, and lengths (the proxy frames bodies itself).
   */
  static final Set<String> NOT_FORWARDED = Set.of("connection", "keep-alive",
      "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer",
      "transfer-encoding", "upgrade", "host", "content-length", "expect", "date");

  private RequestHeaders() {}

  /** A header field to forward. */
  record Header(String name, String value) {}

  /** The first problem with {@code headers}, as the answer to send; empty if they are fine. */
  static Optional<ApiError> check(HttpFields headers, int maxHeaders) {
    if (headers.size() > maxHeaders) {
      return Optional.of(new ApiError(431, "invalid_request_error", "too_many_headers", null,
          "headers: " + headers.size() + " fields (expected: at most " + maxHeaders + ")", 0));
    }
    for (HttpField f : headers) {
      String v = f.getValue();
      for (int i = 0; v != null && i < v.length(); i++) {
        char c = v.charAt(i);
        if ((c < 0x20 && c != '\t') || c == 0x7f) {
          return Optional.of(ApiError.badRequest("invalid_header", f.getName(),
              "header " + f.getName() + ": control character 0x"
                  + String.format("%02x", (int) c) + " at " + i
                  + " (expected: visible characters, space or tab)"));
        }
      }
    }
    return Optional.empty();
  }

  /** The fields to forward to the backend, in order. */
  static List<Header> forwarded(HttpFields headers) {
    List<Header> out = new ArrayList<>(headers.size());
    for (HttpField f : headers) {
      if (!NOT_FORWARDED.contains(f.getName().toLowerCase(Locale.ROOT))) {
        out.add(new Header(f.getName(), f.getValue()));
      }
    }
    return out;
  }
}
