package io.affinityrouter.core.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.core.engine.EngineServer.Answer;
import io.affinityrouter.spi.ChatMessage;
import io.affinityrouter.spi.ReplicaEndpoint;
import io.affinityrouter.spi.TokenizeRequest;
import io.affinityrouter.spi.TokenizerException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link EngineTokenizer} against real HTTP servers answering as vLLM's {@code /tokenize} does. */
class EngineTokenizerTest {
  // vLLM's TokenizeResponse as pydantic writes it (count, max_model_len, tokens, token_strs)
  private static final String ANSWER =
      "{\"count\":4,\"max_model_len\":32768,\"tokens\":[151644,8948,198,0],\"token_strs\":null}";
  private static final String SECRET = "the launch code is 0000";

  private final List<EngineServer> servers = new ArrayList<>();

  @AfterEach
  void close() {
    servers.forEach(EngineServer::close);
  }

  private EngineServer server() {
    EngineServer s = new EngineServer();
    servers.add(s);
    return s;
  }

  private static ReplicaEndpoint endpoint(String id, java.net.URI uri) {
    return ReplicaEndpoint.builder(id, uri).engine(ReplicaEndpoint.Engine.VLLM).model("m").build();
  }

  private static TokenizeRequest chat() {
    return TokenizeRequest.chat("m", List.of(ChatMessage.system("You are \"terse\".\n"),
        ChatMessage.user(SECRET)));
  }

  private static TokenizerException failure(CompletableFuture<int[]> f) throws Exception {
    try {
      f.get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      assertThat(e.getCause()).isInstanceOf(TokenizerException.class);
      assertThat(e.getCause().getMessage()).doesNotContain(SECRET);
      return (TokenizerException) e.getCause();
    }
    throw new AssertionError("tokenized, expected a failure");
  }

  @Test
  void aChatIsSentWithVllmsFieldsAndItsAnswerIsTheTokens() throws Exception {
    EngineServer s = server().answer("/tokenize", Answer.ok(ANSWER));
    EngineTokenizer t = EngineTokenizer.builder(() -> List.of(endpoint("a", s.uri()))).build();

    assertThat(t.tokenize(chat()).get(30, TimeUnit.SECONDS))
        .containsExactly(151644, 8948, 198, 0);
    assertThat(s.received).extracting(EngineServer.Received::method, EngineServer.Received::path)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("POST", "/tokenize"));
    assertThat(s.bodies).containsExactly("{\"model\":\"m\",\"messages\":["
        + "{\"role\":\"system\",\"content\":\"You are \\\"terse\\\".\\n\"},"
        + "{\"role\":\"user\",\"content\":\"" + SECRET + "\"}],"
        + "\"add_generation_prompt\":true,\"continue_final_message\":false,"
        + "\"add_special_tokens\":false}");
  }

  @Test
  void aCompletionSendsItsPromptWithSpecialTokens() throws Exception {
    EngineServer s = server().answer("/tokenize",
        Answer.ok("{\"count\":2,\"max_model_len\":8,\"tokens\":[1,2]}"));
    EngineTokenizer t = EngineTokenizer.builder(() -> List.of(endpoint("a", s.uri()))).build();

    assertThat(t.tokenize(TokenizeRequest.completion("m", "hi")).get(30, TimeUnit.SECONDS))
        .containsExactly(1, 2);
    assertThat(s.bodies).containsExactly(
        "{\"model\":\"m\",\"prompt\":\"hi\",\"add_special_tokens\":true}");
  }

  @Test
  void aFailedOrRefusingEndpointMovesOnToTheNextAndRequestsRotate() throws Exception {
    EngineServer failing = server().answer("/tokenize", Answer.status(503));
    EngineServer ok = server().answer("/tokenize", Answer.ok(ANSWER));
    List<ReplicaEndpoint> fleet = List.of(endpoint("failing", failing.uri()),
        endpoint("refusing", EngineServer.refusingUri()), endpoint("ok", ok.uri()));
    EngineTokenizer t = EngineTokenizer.builder(() -> fleet).attempts(3).build();

    for (int i = 0; i < 3; i++) { // starting at failing, then refusing, then ok
      assertThat(t.tokenize(chat()).get(30, TimeUnit.SECONDS)).hasSize(4);
    }
    assertThat(ok.count("/tokenize")).isEqualTo(3);
    assertThat(failing.count("/tokenize")).isEqualTo(1);
  }

  @Test
  void attemptsBoundTheEndpointsTried() throws Exception {
    EngineServer a = server().answer("/tokenize", Answer.status(500));
    EngineServer b = server().answer("/tokenize", Answer.status(502));
    EngineServer c = server().answer("/tokenize", Answer.ok(ANSWER));
    EngineTokenizer t = EngineTokenizer.builder(() -> List.of(endpoint("a", a.uri()),
        endpoint("b", b.uri()), endpoint("c", c.uri()))).build();

    assertThat(failure(t.tokenize(chat()))).hasMessage("endpoint b answered 502");
    assertThat(a.count("/tokenize") + b.count("/tokenize")).isEqualTo(2);
    assertThat(c.count("/tokenize")).isZero();
  }

  @Test
  void aRejectedRequestFailsAtOnceWithoutItsText() throws Exception {
    EngineServer a = server().answer("/tokenize",
        new Answer(400, "{\"error\":{\"message\":\"" + SECRET + "\",\"code\":400}}", false, null));
    EngineServer b = server().answer("/tokenize", Answer.ok(ANSWER));
    EngineTokenizer t = EngineTokenizer.builder(() -> List.of(endpoint("a", a.uri()),
        endpoint("b", b.uri()))).build();

    assertThat(failure(t.tokenize(chat()))).hasMessage("endpoint a answered 400");
    assertThat(b.count("/tokenize")).isZero();
  }

  @Test
  void anAnswerPastTheLimitIsCutOff() throws Exception {
    StringBuilder big = new StringBuilder("{\"tokens\":[");
    for (int i = 0; i < 100_000; i++) {
      big.append(i).append(',');
    }
    big.append("0]}");
    EngineServer s = server().answer("/tokenize", Answer.ok(big.toString()));
    EngineTokenizer t = EngineTokenizer.builder(() -> List.of(endpoint("a", s.uri())))
        .maxResponseBytes(64 * 1024).attempts(1).build();

    assertThat(failure(t.tokenize(chat())).getMessage())
        .startsWith("endpoint a: io (IOException)");
    assertThat(failure(t.tokenize(chat())).getCause()).hasStackTraceContaining("more than 65536");
  }

  @Test
  void malformedAnswersFailWithWhatIsWrong() throws Exception {
    String[][] cases = {
        {"[1,2]", "not a JSON object"},
        {"{\"count\":1}", "tokens: missing"},
        {"{\"count\":3,\"tokens\":[1,2]}", "count: 3 (expected: 2"},
        {"{\"tokens\":[1,-2]}", "tokens[1]"},
        {"{\"tokens\":[1,\"2\"]}", "tokens[1]"},
        {"{\"tokens\":[1,2.5]}", "tokens[1]"},
        {"{\"tokens\":[4294967296]}", "tokens[0]"},
        {"{\"tokens\":{}}", "tokens: START_OBJECT"},
        {"{\"tokens\":[1,2", "malformed"},
    };
    for (String[] c : cases) {
      EngineServer s = server().answer("/tokenize", Answer.ok(c[0]));
      EngineTokenizer t = EngineTokenizer.builder(() -> List.of(endpoint("a", s.uri()))).build();
      assertThat(failure(t.tokenize(chat())).getMessage()).as(c[0])
          .startsWith("endpoint a: malformed /tokenize answer").contains(c[1]);
    }
  }

  @Test
  void anEngineThatDoesNotAnswerTimesOut() throws Exception {
    EngineServer s = server().answer("/tokenize", Answer.held());
    EngineTokenizer t = EngineTokenizer.builder(() -> List.of(endpoint("a", s.uri())))
        .timeout(Duration.ofMillis(200)).build();

    assertThat(failure(t.tokenize(chat()))).hasMessage("endpoint a: timeout (HttpTimeoutException)");
  }

  @Test
  void onlyVllmEndpointsServingTheModelAreAsked() throws Exception {
    EngineServer s = server().answer("/tokenize", Answer.ok(ANSWER));
    List<ReplicaEndpoint> fleet = List.of(
        ReplicaEndpoint.builder("sglang", s.uri()).engine(ReplicaEndpoint.Engine.SGLANG).build(),
        ReplicaEndpoint.builder("other", s.uri()).model("other").build());
    EngineTokenizer t = EngineTokenizer.builder(() -> fleet).build();

    assertThat(failure(t.tokenize(chat()))).hasMessage("model m: no vLLM endpoint serves it");
    assertThat(s.received).isEmpty();
    EngineTokenizer any = EngineTokenizer.builder(
        () -> List.of(ReplicaEndpoint.builder("any", s.uri()).build())).build();
    assertThat(any.tokenize(chat()).get(30, TimeUnit.SECONDS)).hasSize(4);
  }

  @Test
  void badSettingsFailAtTheBoundary() {
    EngineTokenizer.Builder b = EngineTokenizer.builder(List::of);
    assertThatThrownBy(() -> b.attempts(0)).hasMessage("attempts: 0 (expected: > 0)");
    assertThatThrownBy(() -> b.maxResponseBytes(-1))
        .hasMessage("maxResponseBytes: -1 (expected: > 0)");
    assertThatThrownBy(() -> b.timeout(Duration.ZERO)).hasMessageStartingWith("timeout: PT0S");
  }
}
