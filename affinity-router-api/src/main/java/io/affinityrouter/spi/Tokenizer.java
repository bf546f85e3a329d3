package io.affinityrouter.spi;

import java.util.concurrent.CompletableFuture;

/**
 * Turns a chat or completion request into the token ids the engine will compute for it, chat
 * template included, so that the router hashes the same blocks the engine caches and publishes in
 * its KV events. Text hashed any other way never meets those events.
 *
 * <p>An implementation renders the model's chat template and encodes with the model's
 * tokenizer, in process or by asking the engine (vLLM's {@code POST /tokenize}); the core has
 * one of each ({@code InProcessTokenizer}, {@code EngineTokenizer}). Implementations are
 * thread-safe.
 *
 * <p>{@link #tokenize} never throws: the future completes with the ids, or exceptionally with
 * {@link TokenizerException} when the request cannot be tokenized (a template that rejects the
 * conversation, an unknown model, an engine that does not answer). A gateway then routes on what
 * it has without the tokens, such as the text's hashes; the ids are only ever a routing hint.
 */
public interface Tokenizer extends AutoCloseable {
  /**
   * The token ids of {@code request}, as the engine serving {@code request.model()} computes them.
   * The caller may keep and modify the array.
   */
  CompletableFuture<int[]> tokenize(TokenizeRequest request);

  /** Releases what the tokenizer holds (native memory, connections); by default nothing. */
  @Override
  default void close() {}
}
