package io.affinityrouter.examples.json;

/**
 * Thrown by {@link Json} for text that is not valid JSON (or not of the expected shape); the message
 * says what was expected and where, and never quotes the input beyond one character.
 */
public final class JsonException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  /** An exception with the given message. */
  public JsonException(String message) {
    super(message);
  }
}
