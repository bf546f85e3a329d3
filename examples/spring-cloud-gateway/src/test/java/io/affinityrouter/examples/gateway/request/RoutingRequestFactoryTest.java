package io.affinityrouter.examples.gateway.request;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.affinityrouter.PromptKind;
import io.affinityrouter.RoutingRequest;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;

class RoutingRequestFactoryTest {
  final RoutingRequestFactory factory = new RoutingRequestFactory("x-session-id", "x-tenant-id");

  static DataBuffer body(String json) {
    return DefaultDataBufferFactory.sharedInstance.wrap(json.getBytes(StandardCharsets.UTF_8));
  }

  static HttpHeaders headers(String session, String tenant) {
    HttpHeaders h = new HttpHeaders();
    if (session != null) {
      h.set("x-session-id", session);
    }
    if (tenant != null) {
      h.set("x-tenant-id", tenant);
    }
    return h;
  }

  @Test
  void chatMessagesBecomeTextPromptWithModelSessionAndTenant() {
    RoutingRequest r = factory.from(headers("s-1", "acme"), body("""
        {"model":"llama-3-8b","messages":[
          {"role":"system","content":"Be brief."},
          {"role":"user","content":[{"type":"text","text":"Hello "},
             {"type":"image_url","image_url":{"url":"data:x"}},{"type":"text","text":"there"}]}]}
        """));
    assertThat(r.model()).contains("llama-3-8b");
    assertThat(r.sessionId()).contains("s-1");
    assertThat(r.tenant()).contains("acme");
    assertThat(r.promptKind()).isEqualTo(PromptKind.TEXT);
    assertThat(r.promptText()).isEqualTo("system\nBe brief.\nuser\nHello there\n");
  }

  @Test
  void theSdksResendNumberIsReadAndAnythingElseIsAFirstSend() {
    HttpHeaders h = headers("s", null);
    h.set(RoutingRequest.RETRY_COUNT_HEADER, "2");
    assertThat(factory.from(h, body("{\"prompt\":\"x\"}")).retries()).isEqualTo(2);
    assertThat(factory.from(headers("s", null), body("{\"prompt\":\"x\"}")).retries()).isZero();
    for (String bad : new String[] {"", "-1", "1.5", " 1", "9999999999", "two"}) {
      h.set(RoutingRequest.RETRY_COUNT_HEADER, bad);
      assertThat(factory.from(h, body("{\"prompt\":\"x\"}")).retries()).as(bad).isZero();
    }
  }

  @Test
  void nextTurnPromptExtendsThePreviousOne() {
    String turn1 = "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"S\"},"
        + "{\"role\":\"user\",\"content\":\"Q1\"}]}";
    String turn2 = "{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"S\"},"
        + "{\"role\":\"user\",\"content\":\"Q1\"},{\"role\":\"assistant\",\"content\":\"A1\"},"
        + "{\"role\":\"user\",\"content\":\"Q2\"}]}";
    String p1 = factory.from(headers("s", null), body(turn1)).promptText();
    String p2 = factory.from(headers("s", null), body(turn2)).promptText();
    assertThat(p2).startsWith(p1).isNotEqualTo(p1);
  }

  @Test
  void completionTokenPromptIsRoutedAsTokens() {
    RoutingRequest r = factory.from(headers(null, null),
        body("{\"model\":\"m\",\"prompt\":[1,2,3,40000]}"));
    assertThat(r.promptKind()).isEqualTo(PromptKind.TOKENS);
    assertThat(r.promptTokens()).containsExactly(1, 2, 3, 40000);
    assertThat(r.sessionId()).isEmpty();
  }

  @Test
  void completionStringPromptsAreText() {
    assertThat(factory.from(headers(null, null), body("{\"prompt\":\"once upon\"}")).promptText())
        .isEqualTo("once upon");
    assertThat(factory.from(headers(null, null), body("{\"prompt\":[\"a\",\"b\"]}")).promptText())
        .isEqualTo("a\nb");
  }

  @Test
  void bodyThatIsNotJsonIsRoutedBySessionOnly() {
    for (String text : new String[] {"", "not json", "[1,2]", "{\"model\":42}"}) {
      RoutingRequest r = factory.from(headers("s-2", null), body(text));
      assertThat(r.sessionId()).contains("s-2");
      assertThat(r.model()).isEmpty();
      assertThat(r.promptKind()).isEqualTo(PromptKind.TEXT);
      assertThat(r.promptText()).isEmpty();
    }
    assertThat(factory.from(headers("s-3", null), null).sessionId()).contains("s-3");
  }

  @Test
  void bodyIsLeftReadableForForwarding() {
    String json = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    DataBuffer buffer = body(json);
    factory.from(headers(null, null), buffer);
    assertThat(buffer.readableByteCount()).isEqualTo(json.length());
    assertThat(buffer.toString(StandardCharsets.UTF_8)).isEqualTo(json);
  }

  @Test
  void overlongSessionIdIsRefused() {
    assertThatThrownBy(() -> factory.from(headers("x".repeat(257), null), body("{}")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("sessionId: 257 bytes");
  }

  @Test
  void blankHeaderNameIsRefused() {
    assertThatThrownBy(() -> new RoutingRequestFactory(" ", "x-tenant-id"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("sessionHeader: blank (expected: a header name)");
  }
}
