package io.affinityrouter.examples.httpgateway;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code redis-server} on a free 127.0.0.1 port in a fresh temporary directory, owned by one
 * test: up when {@code redis-cli -p P ping} answers {@code PONG}; {@link #stop()} kills it (an
 * outage), {@link #close()} too. Starting fails the test (never skips) if the server cannot start.
 */
final class RedisServer implements AutoCloseable {
  private final int port;
  private final Path dir;
  private Process process;

  private RedisServer(int port, Path dir) {
    this.port = port;
    this.dir = dir;
  }

  /**
   * Starts a server and waits up to 10 s for its PONG.
   *
   * @throws IllegalStateException if it does not answer
   */
  static RedisServer start() {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Path dir;
    try {
      dir = Files.createTempDirectory("gateway-redis-" + port + "-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    RedisServer r = new RedisServer(port, dir);
    try {
      r.process = new ProcessBuilder("redis-server", "--port", Integer.toString(port),
          "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir.toString())
          .redirectErrorStream(true).redirectOutput(dir.resolve("server.log").toFile()).start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot start redis-server (is it installed?)", e);
    }
    Process started = r.process;
    Runtime.getRuntime().addShutdownHook(new Thread(started::destroyForcibly)); // a killed test
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!"PONG".equals(r.ping())) {
      if (System.nanoTime() > deadline || !r.process.isAlive()) {
        r.close();
        throw new IllegalStateException("redis-server on port " + port + " did not answer PING");
      }
      sleep(20);
    }
    return r;
  }

  /** {@code redis://127.0.0.1:port}. */
  String uri() {
    return "redis://127.0.0.1:" + port;
  }

  /** Runs {@code redis-cli -p port ping}; its output, trimmed, or "" if it failed. */
  String ping() {
    return cli("ping");
  }

  /** Runs a redis-cli command; its output, trimmed. */
  String cli(String... command) {
    List<String> cmd = new ArrayList<>(List.of("redis-cli", "-h", "127.0.0.1", "-p",
        Integer.toString(port)));
    cmd.addAll(List.of(command));
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      p.waitFor(5, TimeUnit.SECONDS);
      return out;
    } catch (IOException e) {
      return "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "";
    }
  }

  /** Kills the server (an outage) and waits for it to exit. */
  void stop() {
    if (process != null && process.isAlive()) {
      process.destroyForcibly();
      try {
        process.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  public void close() {
    stop();
    try (var files = Files.walk(dir)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // best effort
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
