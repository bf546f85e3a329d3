package io.affinityrouter.examples.httpgateway;

import io.affinityrouter.examples.json.Json;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An error answer in OpenAI's shape, as vLLM and OpenAI's clients expect it:
 * {@code {"error":{"message":...,"type":...,"param":...,"code":...}}}, with its HTTP status and an
 * optional {@code Retry-After}. Messages name fields and limits, never request content.
 *
 * @param status the HTTP status
 * @param type the error type ({@code invalid_request_error}, {@code NotFoundError}, ...)
 * @param code a short machine-readable code ({@code model_not_found}, {@code invalid_header}, ...)
 * @param param the request field at fault, or {@code null}
 * @param message what went wrong, for a person
 * @param retryAfterSeconds the {@code Retry-After} to send; {@code 0} for none
 */
record ApiError(int status, String type, String code, String param, String message,
    long retryAfterSeconds) {

  /** A {@code 400} for a bad request. */
  static ApiError badRequest(String code, String param, String message) {
    return new ApiError(400, "invalid_request_error", code, param, message, 0);
  }

  /** The error object's JSON. */
  byte[] body() {
    Map<String, Object> error = new LinkedHashMap<>();
    error.put("message", message);
    error.put("type", type);
    error.put("param", param == null ? Json.NULL : param);
    error.put("code", code);
    return Json.write(Map.of("error", error)).getBytes(StandardCharsets.UTF_8);
  }

  /** A server-sent event carrying the error, to end a stream that failed after it started. */
  byte[] event() {
    return ("data: " + new String(body(), StandardCharsets.UTF_8) + "\n\n")
        .getBytes(StandardCharsets.UTF_8);
  }
}
