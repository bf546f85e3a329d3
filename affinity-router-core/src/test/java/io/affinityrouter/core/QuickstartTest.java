package io.affinityrouter.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.Replica;
import io.affinityrouter.RequestLease;
import io.affinityrouter.Router;
import io.affinityrouter.RoutingDecision;
import io.affinityrouter.RoutingRequest;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The README's quickstart, compiled and run here; the README's copy must be this one. */
class QuickstartTest {
  private static final String START = "// --- README quickstart start ---";
  private static final String END = "// --- README quickstart end ---";

  @Test
  void quickstart() {
    // --- README quickstart start ---
    Router router = AffinityRouter.builder().build();          // in-memory bindings, defaults
    List<Replica> replicas = List.of(
        Replica.builder("vllm-0").address("http://10.0.0.10:8000").build(),
        Replica.builder("vllm-1").address("http://10.0.0.11:8000").build());
    int[] tokenIds = new int[2048];                            // the prompt, tokenized

    RoutingRequest request = RoutingRequest.builder()
        .model("qwen2.5-7b")
        .sessionId("agent-42")                                 // pins the session
        .tenant("acme")                                        // salts prefix hashes
        .promptTokens(tokenIds)
        .expectedOutputTokens(256)
        .build();

    RoutingDecision decision = router.select(request, replicas);
    if (decision.isRouted()) {
      try (RequestLease lease = decision.lease()) {            // counts in-flight work
        String target = decision.replica().address();          // forward the request there
        lease.complete(180);                                   // output tokens, when done
      }
    } else {
      // 429/503 with Retry-After: decision.retryAfter()
    }
    // --- README quickstart end ---
    assertThat(decision.isRouted()).isTrue();
    assertThat(decision.lease().isClosed()).isTrue();
  }

  @Test
  void readmeShowsThisQuickstart() throws IOException {
    assertThat(ReadmeSnippets.inReadme("## Quickstart")).isEqualTo(ReadmeSnippets.inTest(
        Path.of("src/test/java/io/affinityrouter/core/QuickstartTest.java"), START, END));
  }
}
