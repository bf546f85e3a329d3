package io.affinityrouter.core.kvevents;

import static io.affinityrouter.core.kvevents.RecordingSink.cleared;
import static io.affinityrouter.core.kvevents.RecordingSink.removed;
import static io.affinityrouter.core.kvevents.RecordingSink.stored;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The subscriber against an independent publisher: {@code src/test/python/kv_publisher.py}, which
 * declares the event structs as vLLM does (msgspec) and serves replays on a ROUTER socket as vLLM
 * does, in both of vLLM's encodings and both replay framings, with gaps, a replay, a replay that
 * cannot close its gap, and SGLang-style one-token pages; and with SGLang's own structs, salted
 * (its metadata map at array position 7) and not.
 *
 * <p>Python is {@code -Dkv.publisher.python}, else {@code $KV_PUBLISHER_PYTHON}, else the virtual
 * environment {@code .ci/run} makes ({@code ../.kv-venv/bin/python}), else {@code python3}; it needs
 * pyzmq and msgspec (or msgpack). Without them the test fails when {@code CI=true} and is skipped
 * otherwise.
 */
class KvEventPythonPublisherTest {
  private static final Duration PATIENCE = Duration.ofSeconds(30);
  private static final long BIG = Long.parseUnsignedLong("15760518052499183552");

  private final RecordingSink sink = new RecordingSink();
  private Process process;
  private BufferedReader out;
  private Writer in;
  private KvEventSubscriber subscriber;

  @AfterEach
  void stop() throws Exception {
    if (subscriber != null) {
      subscriber.close();
    }
    if (process != null) {
      try {
        command("{\"op\": \"quit\"}", false);
      } catch (IOException gone) {
        // already exited
      }
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    }
  }

  static String python() {
    String p = System.getProperty("kv.publisher.python");
    if (p == null || p.isBlank()) {
      p = System.getenv("KV_PUBLISHER_PYTHON");
    }
    if (p == null || p.isBlank()) {
      Path venv = Path.of("..", ".kv-venv", "bin", "python");
      p = Files.isExecutable(venv) ? venv.toString() : "python3";
    }
    return p;
  }

  /** Fails in CI, skips elsewhere, when the publisher's interpreter or packages are missing. */
  private static void requirePython(String python) throws InterruptedException {
    String problem;
    try {
      Process check = new ProcessBuilder(python, "-c",
          "import zmq\ntry:\n import msgspec\nexcept ImportError:\n import msgpack")
          .redirectErrorStream(true).start();
      String output = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      problem = check.waitFor() == 0 ? null : output.strip();
    } catch (IOException e) {
      problem = e.getMessage();
    }
    if (problem == null) {
      return;
    }
    String message = "KV publisher needs " + python + " with pyzmq and msgspec (or msgpack): "
        + problem + "; .ci/run installs them (python3 -m venv .kv-venv && .kv-venv/bin/pip"
        + " install pyzmq msgspec), or set KV_PUBLISHER_PYTHON";
    if ("true".equalsIgnoreCase(System.getenv("CI"))) {
      throw new AssertionError(message);
    }
    Assumptions.abort(message);
  }

  private String command(String json, boolean answer) throws IOException {
    in.write(json + "\n");
    in.flush();
    if (!answer) {
      return "";
    }
    String line = out.readLine();
    if (line == null) {
      throw new IOException("publisher exited");
    }
    return line;
  }

  private long publish(String op, String... events) throws IOException {
    String line = command("{\"op\": \"" + op + "\", \"events\": [" + String.join(", ", events)
        + "]}", true);
    assertThat(line).startsWith("seq ");
    return Long.parseLong(line.substring(4));
  }

  private static String tokens(int from, int to) {
    return IntStream.range(from, to).mapToObj(Integer::toString)
        .collect(Collectors.joining(", ", "[", "]"));
  }

  private static String storedJson(String hashes, String parent, int from, int to, int size) {
    return "{\"type\": \"BlockStored\", \"block_hashes\": " + hashes + ", \"parent_block_hash\": "
        + parent + ", \"token_ids\": " + tokens(from, to) + ", \"block_size\": " + size
        + ", \"lora_id\": null, \"medium\": \"GPU\", \"lora_name\": null, \"group_idx\": 0,"
        + " \"kv_cache_spec_kind\": \"full_attention\"}";
  }

  private void awaitCalls(int n) {
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (sink.size() < n) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError("timed out waiting for " + n + " sink calls; have "
            + sink.calls() + ", " + subscriber.stats());
      }
      Thread.yield();
    }
  }

  @ParameterizedTest(name = "encoding {0}, replay framing {1}")
  @CsvSource({"array, legacy", "map, legacy", "array, vllm", "map, vllm"})
  void eventsGapsAndReplaysFromVllmsWireFormat(String encoding, String framing) throws Exception {
    startPublisher("--encoding", encoding, "--replay-framing", framing, "--topic", "kv@pod-1@m");
    String digest = "00".repeat(24) + "0102030405060708";
    long last8 = 0x0102030405060708L;
    // a uint64 hash above 2^63 and a 32-byte hash (its last 8 bytes)
    publish("publish", storedJson("[" + Long.toUnsignedString(BIG) + ", {\"bytes\": \"" + digest
        + "\"}]", "null", 0, 32, 16));
    publish("lose", storedJson("[3]", "{\"bytes\": \"" + digest + "\"}", 32, 48, 16));
    publish("publish", storedJson("[4]", "3", 48, 64, 16)); // gap: 3 is replayed
    publish("publish", "{\"type\": \"BlockRemoved\", \"block_hashes\": [4], \"medium\": \"GPU\","
        + " \"group_idx\": 0}");
    awaitCalls(4);
    assertThat(sink.calls()).containsExactly(
        stored("r1", "m", null, new long[] {BIG, last8}, range(0, 32), 16),
        stored("r1", "m", last8, new long[] {3}, range(32, 48), 16),
        stored("r1", "m", 3L, new long[] {4}, range(48, 64), 16),
        removed("r1", 4));
    sink.reset();

    long lost = publish("lose", storedJson("[5]", "4", 64, 80, 16));
    command("{\"op\": \"forget_before\", \"seq\": " + (lost + 1) + "}", true);
    publish("publish", storedJson("[6]", "null", 0, 16, 16)); // a gap replay cannot close
    awaitCalls(2);
    // SGLang: one event per page of one token, after a cache reset; and a CPU-tier block
    List<String> pages = new ArrayList<>();
    pages.add("{\"type\": \"AllBlocksCleared\"}");
    pages.add(storedJson("[7]", "null", 0, 16, 16).replace("\"GPU\"", "\"CPU\""));
    for (int i = 0; i < 20; i++) {
      pages.add(storedJson("[" + (100 + i) + "]", i == 0 ? "null" : "" + (99 + i), i, i + 1, 1));
    }
    publish("publish", pages.toArray(new String[0]));
    awaitCalls(4);
    assertThat(sink.calls()).containsExactly(
        cleared("r1"),
        stored("r1", "m", null, new long[] {6}, range(0, 16), 16),
        cleared("r1"),
        stored("r1", "m", null, new long[] {115}, range(0, 16), 16));
    sink.reset();
    // vLLM's extra keys: the cache salt on a prompt's first block puts it in that tenant's chain;
    // a multimodal key past it never meets a text prompt; an empty entry is plain text
    String salted = storedJson("[8]", "null", 0, 16, 16).replace("}",
        ", \"extra_keys\": [[\"tenant-a\"]]}");
    String image = storedJson("[10]", "8", 16, 32, 16).replace("}",
        ", \"extra_keys\": [[\"0f3a9c-image\"]]}");
    String text = storedJson("[9]", "null", 16, 32, 16).replace("}", ", \"extra_keys\": [null]}");
    publish("publish", salted, image, text);
    awaitCalls(2);
    assertThat(sink.calls()).containsExactly(
        RecordingSink.storedFor("tenant-a", "r1", "m", null, new long[] {8}, range(0, 16), 16),
        stored("r1", "m", null, new long[] {9}, range(16, 32), 16));
    KvEventStats stats = subscriber.stats();
    assertThat(stats.skipped(KvEventSkip.EXTRA_KEYS)).isEqualTo(1);
    assertThat(stats.gaps()).isEqualTo(2);
    assertThat(stats.replays()).isEqualTo(2);
    assertThat(stats.replayFailures()).isEqualTo(1);
    assertThat(stats.skipped(KvEventSkip.NOT_GPU)).isEqualTo(1);
    assertThat(stats.decodeErrors()).isZero();
  }

  /** Starts kv_publisher.py with {@code args} and a subscriber on it, connected. */
  private void startPublisher(String... args) throws Exception {
    String topic = "";
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals("--topic")) {
        topic = args[i + 1];
      }
    }
    String python = python();
    requirePython(python);
    List<String> command = new ArrayList<>(List.of(python, "src/test/python/kv_publisher.py"));
    command.addAll(List.of(args));
    process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    out = new BufferedReader(new InputStreamReader(process.getInputStream(),
        StandardCharsets.UTF_8));
    in = new java.io.OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
    String[] ready = out.readLine().split(" ");
    assertThat(ready[0]).isEqualTo("ready");
    System.out.println("kv_publisher.py codec: " + ready[3]);
    subscriber = KvEventSubscriber.builder(sink).replicaId("r1").model("m").topic(topic)
        .endpoint("tcp://127.0.0.1:" + ready[1]).replayEndpoint("tcp://127.0.0.1:" + ready[2])
        .build();
    subscriber.start();
    long deadline = System.nanoTime() + PATIENCE.toNanos();
    while (subscriber.stats().batches() == 0) { // a SUB socket misses what precedes its connection
      assertThat(System.nanoTime() - deadline).as("subscriber connected").isNegative();
      publish("publish");
      long until = System.nanoTime() + 20_000_000;
      while (subscriber.stats().batches() == 0 && System.nanoTime() - until < 0) {
        Thread.yield();
      }
    }
  }

  @org.junit.jupiter.api.Test
  void sglangsOwnStructsSaltedAndNot() throws Exception {
    startPublisher("--encoding", "sglang", "--replay-framing", "legacy");
    String plain = "{\"type\": \"BlockStored\", \"block_hashes\": [1], \"parent_block_hash\": null,"
        + " \"token_ids\": " + tokens(0, 16) + ", \"block_size\": 16, \"lora_id\": null,"
        + " \"medium\": \"GPU\"}";
    String salted = plain.replace("[1]", "[2]").replace("}", ", \"cache_salt\": \"acme\"}");
    publish("publish", plain, salted, "{\"type\": \"BlockRemoved\", \"block_hashes\": [1],"
        + " \"medium\": \"GPU\"}");
    publish("lose", plain.replace("[1]", "[3]"));
    publish("publish", plain.replace("[1]", "[4]")); // a gap: 3 is replayed
    awaitCalls(5);
    assertThat(sink.calls()).containsExactly(
        stored("r1", "m", null, new long[] {1}, range(0, 16), 16),
        RecordingSink.storedFor("acme", "r1", "m", null, new long[] {2}, range(0, 16), 16),
        removed("r1", 1),
        stored("r1", "m", null, new long[] {3}, range(0, 16), 16),
        stored("r1", "m", null, new long[] {4}, range(0, 16), 16));
    assertThat(subscriber.stats().decodeErrors()).isZero();
    assertThat(subscriber.stats().skippedTotal()).isZero();
  }

  private static int[] range(int from, int to) {
    return IntStream.range(from, to).toArray();
  }
}
