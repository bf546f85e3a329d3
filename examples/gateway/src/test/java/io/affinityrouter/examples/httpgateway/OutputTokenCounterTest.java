package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class OutputTokenCounterTest {
  private static final String STREAM = ""
      + "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n"
      + "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" h\u00e9llo\"}}]}\n\n"
      + "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" world\"}}]}\n\n"
      + ": a comment\n\n"
      + "data: {\"choices\":[{\"index\":0,\"text\":\" raw\"}]}\n\n"
      + "data: [DONE]\n\n";

  @Test
  void countsChunksWithTextWhateverTheSplit() {
    byte[] bytes = STREAM.getBytes(StandardCharsets.UTF_8);
    for (int piece = 1; piece <= bytes.length; piece += 7) {
      OutputTokenCounter c = new OutputTokenCounter();
      for (int i = 0; i < bytes.length; i += piece) {
        c.acceptStream(bytes, i, Math.min(piece, bytes.length - i));
      }
      assertThat(c.outputTokens()).as("pieces of %d bytes", piece).isEqualTo(3);
      assertThat(c.usageReported()).isFalse();
    }
  }

  @Test
  void reportedUsageWins() {
    OutputTokenCounter c = new OutputTokenCounter();
    byte[] s = (STREAM.replace("data: [DONE]", "data: {\"choices\":[],\"usage\":"
        + "{\"prompt_tokens\":9,\"completion_tokens\":17}}\n\ndata: [DONE]"))
        .getBytes(StandardCharsets.UTF_8);
    c.acceptStream(s, 0, s.length);
    assertThat(c.outputTokens()).isEqualTo(17);
    assertThat(c.usageReported()).isTrue();

    OutputTokenCounter whole = new OutputTokenCounter();
    whole.acceptBody("{\"usage\":{\"completion_tokens\":5}}".getBytes(StandardCharsets.UTF_8));
    assertThat(whole.outputTokens()).isEqualTo(5);
    OutputTokenCounter notJson = new OutputTokenCounter();
    notJson.acceptBody("<html>".getBytes(StandardCharsets.UTF_8));
    assertThat(notJson.outputTokens()).isZero();
  }

  @Test
  void overlongLinesAreSkipped() {
    OutputTokenCounter c = new OutputTokenCounter();
    byte[] big = ("data: {\"choices\":[{\"text\":\"" + "x".repeat(OutputTokenCounter.MAX_LINE_BYTES)
        + "\"}]}\n\n" + "data: {\"choices\":[{\"text\":\"y\"}]}\n\n")
        .getBytes(StandardCharsets.UTF_8);
    c.acceptStream(big, 0, big.length);
    assertThat(c.outputTokens()).isEqualTo(1);
  }
}
