package io.affinityrouter.spi;

/**
 * Why a {@link Tokenizer} could not tokenize a request: a template that rejects the conversation,
 * a model it does not know, an engine that failed or did not answer in time. The message never
 * holds prompt text.
 */
public final class TokenizerException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public TokenizerException(String message) {
    super(message);
  }

  public TokenizerException(String message, Throwable cause) {
    super(message, cause);
  }
}
