package io.affinityrouter.examples.openai;

import java.util.Optional;

/** The OpenAI-compatible completion APIs the examples serve and route. */
public enum Endpoint {
  /** {@code POST /v1/chat/completions}: a conversation of messages. */
  CHAT("/v1/chat/completions", "chat.completion"),
  /** {@code POST /v1/completions}: a raw text prompt. */
  COMPLETIONS("/v1/completions", "text_completion");

  private final String path;
  private final String objectName;

  Endpoint(String path, String objectName) {
    this.path = path;
    this.objectName = objectName;
  }

  /** The request path. */
  public String path() {
    return path;
  }

  /** The response's {@code object} field ({@code chat.completion}, {@code text_completion}). */
  public String objectName() {
    return objectName;
  }

  /** The endpoint served at {@code path}, if any. */
  public static Optional<Endpoint> forPath(String path) {
    for (Endpoint e : values()) {
      if (e.path.equals(path)) {
        return Optional.of(e);
      }
    }
    return Optional.empty();
  }
}
