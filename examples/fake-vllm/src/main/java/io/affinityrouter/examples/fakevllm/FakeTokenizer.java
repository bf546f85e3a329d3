package io.affinityrouter.examples.fakevllm;

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
