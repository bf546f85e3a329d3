package io.affinityrouter.examples.httpgateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.affinityrouter.examples.fakevllm.FakeVllmConfig;
import io.affinityrouter.examples.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Clients that misbehave, over raw sockets, against a gateway with two in-flight slots per backend:
 * each attack gets an OpenAI-style 4xx (or its connection closed, for a slow sender) and leaves
 * nothing behind: no open lease, no request in flight on any backend, and a normal request is
 * routed afterwards.
 */
class HostileClientsTest {
  private static final String CHAT = "/v1/chat/completions";
  private TestFleet fleet;
  private Gateway g;

  @BeforeEach
  void start() {
    fleet = TestFleet.start(2, FakeVllmConfig.builder().latencyScale(0));
    g = fleet.gateway(fleet.config().maxInFlightPerBackend(2)
        .headerTimeout(Duration.ofSeconds(1)).bodyTimeout(Duration.ofSeconds(1)), null);
  }

  @AfterEach
  void stop() {
    fleet.close();
  }

  private static String chat(String model) {
    return "{\"model\":\"" + model + "\",\"max_tokens\":4,"
        + "\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}]}";
  }

  private RawHttp.Answer send(byte[] request) throws IOException {
    return RawHttp.exchange(g.port(), request, 20_000);
  }

  private static Map<String, Object> error(RawHttp.Answer a) {
    assertThat(a.header("Content-Type")).as(a.head()).startsWith("application/json");
    @SuppressWarnings("unchecked")
    Map<String, Object> e = (Map<String, Object>) Json.parseObject(a.body()).get("error");
    return e;
  }

  /** No lease open, nothing in flight, and the next request is routed. */
  private void nothingLeaked() throws Exception {
    assertThat(TestFleet.await(() -> g.openLeases() == 0)).as("leases released").isTrue();
    for (int i = 0; i < fleet.backends.size(); i++) {
      String id = TestFleet.id(i);
      assertThat(g.inFlight(id)).as("in flight on %s", id).isZero();
    }
    assertThat(TestFleet.await(() -> g.inFlight() == 0)).isTrue();
    for (int i = 0; i < 5; i++) { // more than the 2 x 2 slots: a leaked one would show as 429
      RawHttp.Answer ok = send(RawHttp.request("POST", CHAT, chat(TestFleet.MODEL),
          "x-session-id: after-" + i));
      assertThat(ok.status()).as(ok.head() + ok.body()).isEqualTo(200);
    }
  }

  @Test
  void controlBytesInHeadersGet400AndLeakNoLease() throws Exception {
    for (int round = 0; round < 3; round++) {
      for (char c : new char[] {0x01, 0x7f}) {
        for (String name : new String[] {"x-session-id", "x-trace"}) {
          RawHttp.Answer a = send(RawHttp.request("POST", CHAT, chat(TestFleet.MODEL),
              name + ": ab" + c + "cd"));
          assertThat(a.status()).as("%s with 0x%02x: %s", name, (int) c, a.head()).isEqualTo(400);
          assertThat(error(a).get("type")).isEqualTo("invalid_request_error");
        }
      }
    }
    nothingLeaked();
  }

  @Test
  void bareCrOrLfInsideSessionIdIsRefusedNotSplit() throws Exception {
    for (String sep : new String[] {"\r", "\n"}) {
      RawHttp.Answer a = send(RawHttp.request("POST", CHAT, chat(TestFleet.MODEL),
          "x-session-id: s1" + sep + "x-injected: yes"));
      assertThat(a.status()).as("separator %s: %s", sep.equals("\r") ? "CR" : "LF", a.head())
          .isEqualTo(400);
      assertThat(error(a)).containsKey("message");
    }
    assertThat(fleet.backends).allSatisfy(b -> assertThat(b.finishedRequests()).isZero());
    nothingLeaked();
  }

  @Test
  void slowHeaderSendersDoNotStarveOthersAndAreCut() throws Exception {
    int slow = 12; // three times the old server's worker threads
    List<Socket> sockets = new ArrayList<>();
    AtomicBoolean stop = new AtomicBoolean();
    CountDownLatch cut = new CountDownLatch(slow);
    try {
      for (int i = 0; i < slow; i++) {
        Socket s = new Socket("127.0.0.1", g.port());
        sockets.add(s);
        Thread t = new Thread(() -> drip(s, "POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nx-a: "
            + "b".repeat(10_000), stop, cut), "slowloris");
        t.setDaemon(true);
        t.start();
      }
      Thread.sleep(300); // let every slow sender get its first bytes in (not a wait for a result)
      long t0 = System.nanoTime();
      RawHttp.Answer ok = send(RawHttp.request("POST", CHAT, chat(TestFleet.MODEL),
          "x-session-id: normal"));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertThat(ok.status()).isEqualTo(200);
      assertThat(ms).as("a normal request beside %d slow senders", slow).isLessThan(5_000);
      assertThat(cut.await(20, TimeUnit.SECONDS)).as("slow senders cut").isTrue();
      assertThat(g.slowHeaderConnectionsClosed()).isGreaterThanOrEqualTo(slow);
    } finally {
      stop.set(true);
      for (Socket s : sockets) {
        s.close();
      }
    }
    nothingLeaked();
  }

  @Test
  void aKeepAliveConnectionIdleBetweenRequestsIsNotCutAsSlow() throws Exception {
    try (Socket s = new Socket("127.0.0.1", g.port())) {
      s.setSoTimeout(20_000);
      for (int i = 0; i < 2; i++) {
        s.getOutputStream().write(RawHttp.request("POST", CHAT, chat(TestFleet.MODEL),
            "x-session-id: keep"));
        assertThat(RawHttp.read(s.getInputStream()).status()).isEqualTo(200);
        s.getOutputStream().write(("GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
            .getBytes(StandardCharsets.UTF_8)); // the last request before the idle time
        assertThat(RawHttp.read(s.getInputStream()).status()).isEqualTo(200);
        Thread.sleep(2_500); // idle for 2.5 header timeouts: time is what is tested here
      }
    }
    assertThat(g.slowHeaderConnectionsClosed()).isZero();
    nothingLeaked();
  }

  @Test
  void slowBodySendersGet408AndDoNotStarveOthers() throws Exception {
    int slow = 12;
    List<CompletableFuture<RawHttp.Answer>> answers = new ArrayList<>();
    AtomicBoolean stop = new AtomicBoolean();
    List<Socket> sockets = new ArrayList<>();
    try {
      for (int i = 0; i < slow; i++) {
        Socket s = new Socket("127.0.0.1", g.port());
        s.setSoTimeout(20_000);
        sockets.add(s);
        String body = chat(TestFleet.MODEL);
        s.getOutputStream().write(("POST " + CHAT + " HTTP/1.1\r\nHost: x\r\n"
            + "Content-Type: application/json\r\nx-session-id: slow-" + i + "\r\n"
            + "Content-Length: " + body.length() + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
        Thread t = new Thread(() -> {
          try {
            for (int k = 0; k < body.length() && !stop.get(); k++) {
              s.getOutputStream().write(body.charAt(k));
              s.getOutputStream().flush();
              Thread.sleep(250);
            }
          } catch (IOException | InterruptedException e) {
            // cut by the server, or the test is over
          }
        }, "slow-body");
        t.setDaemon(true);
        t.start();
        answers.add(CompletableFuture.supplyAsync(() -> {
          try {
            return RawHttp.read(s.getInputStream());
          } catch (IOException e) {
            return new RawHttp.Answer(-2, e.toString(), "");
          }
        }));
      }
      long t0 = System.nanoTime();
      RawHttp.Answer ok = send(RawHttp.request("POST", CHAT, chat(TestFleet.MODEL),
          "x-session-id: normal"));
      assertThat(ok.status()).isEqualTo(200);
      assertThat((System.nanoTime() - t0) / 1_000_000).isLessThan(5_000);
      for (CompletableFuture<RawHttp.Answer> f : answers) {
        RawHttp.Answer a = f.get(30, TimeUnit.SECONDS);
        assertThat(a.status()).as(a.head()).isEqualTo(408);
        assertThat(error(a).get("code")).isEqualTo("request_timeout");
      }
    } finally {
      stop.set(true);
      for (Socket s : sockets) {
        s.close();
      }
    }
    nothingLeaked();
  }

  /** Sends {@code text} one byte every 250 ms until stopped or cut; counts down when cut. */
  private static void drip(Socket s, String text, AtomicBoolean stop, CountDownLatch cut) {
    try {
      OutputStream out = s.getOutputStream();
      InputStream in = s.getInputStream();
      s.setSoTimeout(1);
      for (int i = 0; i < text.length() && !stop.get(); i++) {
        out.write(text.charAt(i));
        out.flush();
        try {
          if (in.read() < 0) {
            break; // closed by the server
          }
        } catch (SocketTimeoutException e) {
          // still open
        }
        Thread.sleep(250);
      }
    } catch (IOException e) {
      // reset by the server
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    if (!stop.get()) {
      cut.countDown();
    }
  }

  @Test
  void oversizedHeaderGets431InOpenAiShape() throws Exception {
    for (int size : new int[] {20_000, 1 << 20}) {
      RawHttp.Answer a = send(RawHttp.request("POST", CHAT, chat(TestFleet.MODEL),
          "x-big: " + "a".repeat(size)));
      assertThat(a.status()).as("a %d-byte header: %s", size, a.head()).isEqualTo(431);
      assertThat(error(a).get("code")).isEqualTo("headers_too_large");
    }
    nothingLeaked();
  }

  @Test
  void threeHundredHeadersGet431InOpenAiShape() throws Exception {
    String[] headers = new String[300];
    for (int i = 0; i < headers.length; i++) {
      headers[i] = "x-h" + i + ": v";
    }
    RawHttp.Answer a = send(RawHttp.request("POST", CHAT, chat(TestFleet.MODEL), headers));
    assertThat(a.status()).as(a.head()).isEqualTo(431);
    assertThat(error(a).get("code")).isEqualTo("too_many_headers");
    nothingLeaked();
  }

  @Test
  void badContentLengthGets400InOpenAiShape() throws Exception {
    byte[] bad = ("POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + "Content-Length: abc\r\n\r\n" + chat(TestFleet.MODEL)).getBytes(StandardCharsets.UTF_8);
    RawHttp.Answer a = send(bad);
    assertThat(a.status()).as(a.head()).isEqualTo(400);
    assertThat(error(a).get("type")).isEqualTo("invalid_request_error");
    assertThat(a.body()).doesNotContain("<html");
    nothingLeaked();
  }

  @Test
  void aFiftyMegabyteChunkedBodyGets413() throws Exception {
    byte[] head = ("POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + "Transfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.UTF_8);
    byte[] chunk = new byte[64 << 10];
    java.util.Arrays.fill(chunk, (byte) 'a');
    byte[] chunkHead = (Integer.toHexString(chunk.length) + "\r\n").getBytes(StandardCharsets.UTF_8);
    byte[] crlf = "\r\n".getBytes(StandardCharsets.UTF_8);
    try (Socket s = new Socket("127.0.0.1", g.port())) {
      s.setSoTimeout(20_000);
      Thread writer = new Thread(() -> { // a writer of its own: the answer comes before the end
        try {
          OutputStream out = s.getOutputStream();
          out.write(head);
          for (long sent = 0; sent < 50L << 20; sent += chunk.length) {
            out.write(chunkHead);
            out.write(chunk);
            out.write(crlf);
          }
          out.write("0\r\n\r\n".getBytes(StandardCharsets.UTF_8));
          out.flush();
        } catch (IOException e) {
          // cut by the server once it has answered
        }
      }, "chunked-writer");
      writer.setDaemon(true);
      writer.start();
      RawHttp.Answer a = RawHttp.read(s.getInputStream());
      assertThat(a.status()).as(a.head() + a.body()).isEqualTo(413);
      assertThat(error(a).get("code")).isEqualTo("body_too_large");
    }
    assertThat(fleet.backends).allSatisfy(b -> assertThat(b.finishedRequests()).isZero());
    nothingLeaked();
  }

  @Test
  void aDeclaredContentLengthOverTheLimitGets413BeforeTheBody() throws Exception {
    byte[] request = ("POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + "Content-Length: " + (50L << 20) + "\r\n\r\n" + chat(TestFleet.MODEL))
        .getBytes(StandardCharsets.UTF_8);
    RawHttp.Answer a = send(request);
    assertThat(a.status()).as(a.head() + a.body()).isEqualTo(413);
    assertThat(error(a).get("code")).isEqualTo("body_too_large");
    nothingLeaked();
  }

  @Test
  void unknownModelGets404ModelNotFoundWithoutRetryAfter() throws Exception {
    for (int i = 0; i < 6; i++) {
      RawHttp.Answer a = send(RawHttp.request("POST", CHAT, chat("no-such-model"),
          "x-session-id: u" + i));
      assertThat(a.status()).as(a.head()).isEqualTo(404);
      assertThat(a.header("Retry-After")).isNull();
      Map<String, Object> e = error(a);
      assertThat(e.get("code")).isEqualTo("model_not_found");
      assertThat(e.get("param")).isEqualTo("model");
      assertThat((String) e.get("message")).contains("no-such-model");
    }
    nothingLeaked();
  }

  @Test
  void unknownPathsAndMethodsGetJsonErrors() throws Exception {
    RawHttp.Answer a = send(RawHttp.request("POST", "/v1/embeddings", "{}"));
    assertThat(a.status()).isEqualTo(404);
    assertThat(error(a).get("code")).isEqualTo("not_found");
    RawHttp.Answer b = send(RawHttp.request("GET", CHAT, ""));
    assertThat(b.status()).isEqualTo(405);
    assertThat(error(b).get("code")).isEqualTo("method_not_allowed");
    nothingLeaked();
  }
}
