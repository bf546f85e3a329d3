package io.affinityrouter.core.engine;

import io.affinityrouter.core.engine.TrackedReplica.Failure;
import io.affinityrouter.spi.ReplicaEndpoint;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The HTTP requests the fleet view sends to engines and how their failures are read. vLLM's
 * sleep-mode endpoints ({@code vllm/entrypoints/openai/api_server.py}, served only with
 * {@code VLLM_SERVER_DEV_MODE=1}): {@code POST /sleep?level=N&mode=M} (level 1 offloads the
 * weights to CPU memory, 2 discards them, default 1; mode {@code abort}, vLLM's default,
 * {@code wait} or {@code keep} for the requests in flight), {@code POST /wake_up} with optional repeated
 * {@code tags=weights|kv_cache}, {@code GET /is_sleeping} answering
 * {@code {"is_sleeping": true|false}}. SGLang's ({@code sglang/srt/entrypoints/http_server.py}):
 * {@code POST /release_memory_occupation} and {@code /resume_memory_occupation} with a JSON body
 * {@code {"tags": ["weights", "kv_cache", ...]}} (no tags: all), answering 200. Stateless.
 */
final class EngineHttp {
  private static final Pattern IS_SLEEPING =
      Pattern.compile("\"is_sleeping\"\\s*:\\s*(true|false)");

  private EngineHttp() {}

  static URI resolve(ReplicaEndpoint endpoint, String pathAndQuery) {
    return URI.create(endpoint.baseUri() + pathAndQuery);
  }

  static HttpRequest get(URI uri, Duration timeout) {
    return HttpRequest.newBuilder(uri).timeout(timeout).GET().build();
  }

  static HttpRequest post(URI uri, Duration timeout) {
    return HttpRequest.newBuilder(uri).timeout(timeout)
        .POST(HttpRequest.BodyPublishers.noBody()).build();
  }

  static HttpRequest post(URI uri, Duration timeout, String json) {
    return HttpRequest.newBuilder(uri).timeout(timeout).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8)).build();
  }

  /** SGLang's memory request body: {@code {"tags": [...]}}, or {@code {}} for every tag. */
  static String tagsBody(Collection<String> tags) {
    if (tags.isEmpty()) {
      return "{}";
    }
    StringBuilder sb = new StringBuilder("{\"tags\":[");
    String sep = "";
    for (String tag : tags) {
      sb.append(sep).append('"');
      for (int i = 0; i < tag.length(); i++) {
        char c = tag.charAt(i);
        if (c == '"' || c == '\\') {
          sb.append('\\').append(c);
        } else if (c < 0x20) {
          sb.append(String.format("\\u%04x", (int) c));
        } else {
          sb.append(c);
        }
      }
      sb.append('"');
      sep = ",";
    }
    return sb.append("]}").toString();
  }

  /** Sends {@code request}; an answer longer than {@code maxBytes} fails with an IOException. */
  static CompletableFuture<HttpResponse<String>> send(HttpClient client, HttpRequest request,
      int maxBytes) {
    return client.sendAsync(request, BoundedBody.stringHandler(maxBytes));
  }

  /** {@code /wake_up} with its tags, each as its own {@code tags=} parameter. */
  static String wakeUpPath(Collection<String> tags) {
    StringBuilder sb = new StringBuilder("/wake_up");
    char sep = '?';
    for (String tag : tags) {
      sb.append(sep).append("tags=").append(URLEncoder.encode(tag, StandardCharsets.UTF_8));
      sep = '&';
    }
    return sb.toString();
  }

  /** The answer of {@code /is_sleeping}, if the body has one. */
  static Optional<Boolean> isSleeping(String body) {
    Matcher m = IS_SLEEPING.matcher(body);
    return m.find() ? Optional.of(Boolean.parseBoolean(m.group(1))) : Optional.empty();
  }

  /** How a failed exchange failed: only a refused connection is {@link Failure#REFUSED}. */
  static Failure classify(Throwable error) {
    Throwable cause = unwrap(error);
    if (cause instanceof ConnectException) {
      return Failure.REFUSED;
    }
    if (cause instanceof HttpTimeoutException) {
      return Failure.TIMEOUT;
    }
    return Failure.IO;
  }

  static Throwable unwrap(Throwable error) {
    Throwable t = error;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
