package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.examples.micrometer.ProxyMeters;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.EofException;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;

/**
 * The server's own error answers (a request it could not parse: a bad {@code Content-Length}, a
 * header block over the limit, a bad request line; or a handler that threw) and the refusals while
 * shutting down, in OpenAI's shape instead of an HTML page, each logged as one line and counted.
 * Thread-safe.
 */
final class ServerErrors extends ErrorHandler {
  private final ProxyMeters meters;

  ServerErrors(ProxyMeters meters) {
    this.meters = meters;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) {
    if (request.getAttribute(ERROR_EXCEPTION) instanceof EofException eof) {
      callback.failed(eof); // the connection is closing: no one to answer, the request logged its end
      return true;
    }
    int status = response.getStatus();
    if (status < 400 && request.getAttribute(ERROR_STATUS) instanceof Integer) {
      status = (Integer) request.getAttribute(ERROR_STATUS);
    }
    if (status < 400) {
      status = 500;
    }
    Object message = request.getAttribute(ERROR_MESSAGE);
    ApiError error = error(status, message instanceof String ? (String) message : null);
    record(error, request.getMethod(), request.getHttpURI() == null ? null
        : request.getHttpURI().getPath(), Request.getRemoteAddr(request));
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
    byte[] body = error.body();
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, Long.toString(body.length));
    response.write(true, ByteBuffer.wrap(body), callback);
    return true;
  }

  @Override
  public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
    ApiError error = error(status, reason);
    record(error, null, null, null);
    fields.put(HttpHeader.CONTENT_TYPE, "application/json");
    return ByteBuffer.wrap(error.body());
  }

  /** A request arriving while the gateway shuts down: {@code 503}, and the connection closed. */
  void shuttingDown(Request request, Response response, Callback callback) {
    ApiError error = new ApiError(503, "unavailable", "shutting_down", null,
        "the gateway is shutting down", 1);
    record(error, request.getMethod(), request.getHttpURI().getPath(),
        Request.getRemoteAddr(request));
    response.setStatus(error.status());
    response.getHeaders().put(HttpHeader.RETRY_AFTER, Long.toString(error.retryAfterSeconds()));
    response.getHeaders().put(HttpHeader.CONNECTION, "close");
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
    byte[] body = error.body();
    response.getHeaders().put(HttpHeader.CONTENT_LENGTH, Long.toString(body.length));
    response.write(true, ByteBuffer.wrap(body), callback);
  }

  private void record(ApiError error, String method, String path, String remote) {
    meters.rejected(error.status(), error.code());
    FailureLog.failed(error.status(), error.code(), method, path, null, null, null, remote, 0,
        error.message());
  }

  static ApiError error(int status, String reason) {
    String code;
    switch (status) {
      case 408:
        code = "request_timeout";
        break;
      case 413:
        code = "body_too_large";
        break;
      case 414:
        code = "uri_too_long";
        break;
      case 431:
        code = "headers_too_large";
        break;
      case 500:
        code = "internal_error";
        break;
      default:
        code = status == 400 ? "invalid_request" : "http_" + status;
    }
    String text = reason == null || reason.isBlank() ? HttpStatus.getMessage(status) : reason;
    return new ApiError(status, status >= 500 ? "internal_error" : "invalid_request_error", code,
        null, text, 0);
  }
}
