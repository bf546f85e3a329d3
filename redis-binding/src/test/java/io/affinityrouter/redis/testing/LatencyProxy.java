package io.affinityrouter.redis.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on 127.0.0.1 between Lettuce and a redis-server, for tests: it forwards bytes both
 * ways and can add a delay to every reply chunk (a latency spike) or hold the replies back
 * altogether (a stall) until told otherwise. Thread-safe; {@link #close()} stops it.
 */
public final class LatencyProxy implements AutoCloseable {
  private final ServerSocket server;
  private final int targetPort;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile long delayMillis;
  private volatile boolean stalled;
  private volatile boolean closed;

  /** Starts a proxy to {@code 127.0.0.1:targetPort}. */
  public LatencyProxy(int targetPort) {
    this.targetPort = targetPort;
    try {
      this.server = new ServerSocket();
      server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Thread accept = new Thread(this::accept, "latency-proxy-accept");
    accept.setDaemon(true);
    accept.start();
  }

  /** The proxy's port on 127.0.0.1. */
  public int port() {
    return server.getLocalPort();
  }

  /** The proxy's Redis URI. */
  public String uri() {
    return "redis://127.0.0.1:" + port();
  }

  /** Delays every reply chunk by {@code millis} (0: none). */
  public void delay(long millis) {
    this.delayMillis = millis;
  }

  /** Holds every reply back ({@code true}) or lets them through again. */
  public void stall(boolean on) {
    this.stalled = on;
  }

  private void accept() {
    while (!closed) {
      try {
        Socket client = server.accept();
        Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        client.setTcpNoDelay(true);
        upstream.setTcpNoDelay(true);
        sockets.add(client);
        sockets.add(upstream);
        pump(client, upstream, false);
        pump(upstream, client, true);
      } catch (IOException e) {
        if (!closed) {
          RedisProcess.sleep(10);
        }
      }
    }
  }

  private void pump(Socket from, Socket to, boolean replies) {
    Thread t = new Thread(() -> {
      byte[] buffer = new byte[16 * 1024];
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        int n;
        while ((n = in.read(buffer)) >= 0) {
          if (replies) {
            while (stalled && !closed) {
              RedisProcess.sleep(1);
            }
            long d = delayMillis;
            if (d > 0) {
              RedisProcess.sleep(d);
            }
          }
          out.write(buffer, 0, n);
          out.flush();
        }
      } catch (IOException e) {
        // a side closed: the other goes too
      } finally {
        closeQuietly(from);
        closeQuietly(to);
      }
    }, replies ? "latency-proxy-replies" : "latency-proxy-commands");
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // closing
    }
  }

  @Override
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException ignored) {
      // closing
    }
    sockets.forEach(LatencyProxy::closeQuietly);
  }
}
