package io.affinityrouter.examples.httpgateway;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A test client: posts completion requests to a gateway. */
final class ChatClient {
  final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  /** One response as the client saw it. */
  record Reply(int status, String replica, String reason, String body, HttpHeaders headers) {}

  Reply post(String gatewayUrl, String path, String sessionId, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(gatewayUrl + path))
        .timeout(Duration.ofSeconds(20))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (sessionId != null) {
      b.header(GatewayConfig.DEFAULT_SESSION_HEADER, sessionId);
    }
    HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    return new Reply(r.statusCode(), r.headers().firstValue("x-affinity-replica").orElse(null),
        r.headers().firstValue("x-affinity-reason").orElse(null), r.body(), r.headers());
  }
}
