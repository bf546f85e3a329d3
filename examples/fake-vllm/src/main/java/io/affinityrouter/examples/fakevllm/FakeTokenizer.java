package io.affinityrouter.examples.fakevllm;

import io.affinityrouter.core.tokenizer.InProcessTokenizer;
import io.affinityrouter.examples.openai.CompletionRequest;
import io.affinityrouter.spi.ChatMessage;
import io.affinityrouter.spi.TokenizeRequest;
import java.util.ArrayList;
import java.util.List;

/**
 * This fake engine's tokenizer: the prompt text (chat messages rendered as its template does) cut
 * into tokens of {@value FakeVllmConfig#CHARS_PER_TOKEN} characters, each token id a hash of its
 * characters below {@value #VOCAB}. Not a real vocabulary, but it has what routing on token ids
 * needs: the same text always gives the same ids, and a text that extends another gives ids that
 * extend the other's, so cache block {@code b} of {@code blockSize} tokens is exactly the text's
 * character block {@code b}. No BOS or other special tokens. Stateless.
 */
final class FakeTokenizer {
  /** The vocabulary size: ids are in {@code [0, VOCAB)}. */
  static final int VOCAB = 1 << 17;

  private FakeTokenizer() {}

  /**
   * The ids of {@code request} as this engine computes them: through {@code model}'s tokenizer
   * when there is one (chat template included, vLLM's defaults), else {@link #tokens(String)} of
   * its text.
   */
  static int[] tokens(CompletionRequest request, InProcessTokenizer model, String modelName) {
    if (model == null) {
      return tokens(request.promptText());
    }
    TokenizeRequest r;
    if (request.messages().isEmpty()) {
      r = TokenizeRequest.completion(modelName, request.promptText());
    } else {
      List<ChatMessage> messages = new ArrayList<>();
      for (CompletionRequest.Message m : request.messages()) {
        messages.add(new ChatMessage(m.role(), m.content()));
      }
      r = TokenizeRequest.chat(modelName, messages);
    }
    return model.tokenize(r).join();
  }

  /** The token ids of {@code text}. */
  static int[] tokens(String text) {
    int per = FakeVllmConfig.CHARS_PER_TOKEN;
    int[] ids = new int[(text.length() + per - 1) / per];
    for (int t = 0; t < ids.length; t++) {
      int h = 0x811c9dc5;
      for (int i = t * per, end = Math.min(text.length(), i + per); i < end; i++) {
        h = (h ^ text.charAt(i)) * 0x01000193;
      }
      ids[t] = h & (VOCAB - 1);
    }
    return ids;
  }
}
