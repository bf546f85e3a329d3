package io.affinityrouter.redis.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One real {@code redis-server} (or sentinel) process on 127.0.0.1 that a test owns: started in a
 * fresh directory, considered up when {@code redis-cli ping} answers PONG, and stopped, paused
 * ({@code SIGSTOP}) or restarted by the test. A JVM shutdown hook kills whatever is left.
 */
public final class RedisProcess implements AutoCloseable {

  private static final List<RedisProcess> ALL = new ArrayList<>();

  static {
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      synchronized (ALL) {
        for (RedisProcess p : ALL) {
          p.kill();
        }
      }
    }));
  }

  private final int port;
  private final Path dir;
  private final List<String> args;
  private final List<String> cliArgs;
  private Process process;

  private RedisProcess(int port, Path dir, List<String> args, List<String> cliArgs) {
    this.port = port;
    this.dir = dir;
    this.args = args;
    this.cliArgs = cliArgs;
    synchronized (ALL) {
      ALL.add(this);
    }
  }

  /** Starts a plain server with extra arguments, e.g. {@code --cluster-enabled yes}. */
  public static RedisProcess start(String... extra) {
    int port = freePort();
    return start(port, List.of("--port", Integer.toString(port)), List.of(), extra);
  }

  /** Starts a server with its own port arguments (TLS) and redis-cli arguments to ping it. */
  public static RedisProcess start(int port, List<String> portArgs, List<String> cliArgs,
      String... extra) {
    Path dir = freshDir("redis-" + port);
    List<String> args = new ArrayList<>(List.of("redis-server"));
    args.addAll(portArgs);
    args.addAll(List.of("--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
        "--dir", dir.toString(), "--protected-mode", "no"));
    args.addAll(List.of(extra));
    RedisProcess p = new RedisProcess(port, dir, args, cliArgs);
    p.launch();
    return p;
  }

  /** Starts a sentinel from a config file text (the file is written in a fresh directory). */
  public static RedisProcess sentinel(String configTemplate) {
    int port = freePort();
    Path dir = freshDir("sentinel-" + port);
    Path conf = dir.resolve("sentinel.conf");
    try {
      Files.writeString(conf, "port " + port + "\nbind 127.0.0.1\ndir " + dir + "\n" + configTemplate);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    RedisProcess p = new RedisProcess(port, dir,
        List.of("redis-server", conf.toString(), "--sentinel"), List.of());
    p.launch();
    return p;
  }

  public int port() {
    return port;
  }

  public Path dir() {
    return dir;
  }

  public long pid() {
    return process.pid();
  }

  private void launch() {
    try {
      process = new ProcessBuilder(args).directory(dir.toFile())
          .redirectErrorStream(true).redirectOutput(dir.resolve("server.log").toFile()).start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start " + args.get(0) + " (is redis-server installed?)", e);
    }
    awaitPong(20_000);
  }

  /** Runs redis-cli against this server and returns its output (trimmed). */
  public String cli(String... command) {
    List<String> cmd = new ArrayList<>(List.of("redis-cli", "-h", "127.0.0.1", "-p", Integer.toString(port)));
    cmd.addAll(cliArgs);
    cmd.addAll(List.of(command));
    return run(cmd, 10);
  }

  static String run(List<String> cmd, int timeoutSeconds) {
    Path out = null;
    try {
      // Output goes to a file: a pipe would fill up and block a chatty command (reshard).
      out = Files.createTempFile("redis-cli-", ".out");
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile())
          .start();
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException("timed out: " + cmd);
      }
      return Files.readString(out).trim();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } finally {
      if (out != null) {
        try {
          Files.deleteIfExists(out);
        } catch (IOException ignored) {
          // a temp file left behind
        }
      }
    }
  }

  private void awaitPong(long timeoutMillis) {
    long deadline = System.currentTimeMillis() + timeoutMillis;
    while (System.currentTimeMillis() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException("redis exited: " + log());
      }
      try {
        if (cli("ping").equals("PONG")) {
          return;
        }
      } catch (IllegalStateException ignored) {
        // not up yet
      }
      sleep(20);
    }
    throw new IllegalStateException("redis on port " + port + " did not answer PING: " + log());
  }

  public String log() {
    try {
      return Files.readString(dir.resolve("server.log"));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  /** Stops the process (SIGKILL) without saving anything. */
  public void kill() {
    if (process != null && process.isAlive()) {
      if (paused) {
        signal("CONT");
      }
      process.destroyForcibly();
      try {
        process.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Starts the process again on the same port and directory (data is gone: no persistence). */
  public void restart() {
    kill();
    launch();
  }

  private volatile boolean paused;

  /** SIGSTOP. */
  public void pause() {
    signal("STOP");
    paused = true;
  }

  /** SIGCONT. */
  public void resume() {
    signal("CONT");
    paused = false;
  }

  private void signal(String name) {
    run(List.of("kill", "-" + name, Long.toString(process.pid())), 5);
  }

  /** Kills the process and removes its directory. */
  @Override
  public void close() {
    kill();
    deleteTree(dir);
  }

  static void deleteTree(Path root) {
    try (java.util.stream.Stream<Path> paths = Files.walk(root)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // a temporary directory left behind
    }
  }

  /** A free TCP port whose cluster bus port (+10000) is free too. */
  public static int freePort() {
    for (int i = 0; i < 100; i++) {
      try (ServerSocket s = new ServerSocket(0)) {
        int port = s.getLocalPort();
        if (port < 50000) {
          try (ServerSocket bus = new ServerSocket(port + 10000)) {
            return port;
          } catch (IOException busy) {
            // try another
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    throw new IllegalStateException("no free port pair found");
  }

  static Path freshDir(String name) {
    try {
      return Files.createTempDirectory(name + "-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
