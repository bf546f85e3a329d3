package io.affinityrouter.core.kvevents;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy whose first connection is accepted and then left silent, as a connection whose
 * ZeroMQ handshake stalls: nothing is read from it or sent on it. Later connections are forwarded
 * to the upstream port both ways. Records when the client closes the silent connection.
 */
final class StallingProxy implements AutoCloseable {
  private final ServerSocket server;
  private final int upstreamPort;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private final AtomicInteger accepted = new AtomicInteger();
  private volatile boolean stalledClosedByClient;
  private volatile boolean running = true;

  StallingProxy(int upstreamPort) throws IOException {
    this.upstreamPort = upstreamPort;
    server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    daemon(this::acceptLoop, "stalling-proxy-accept").start();
  }

  String endpoint() {
    return "tcp://127.0.0.1:" + server.getLocalPort();
  }

  int accepted() {
    return accepted.get();
  }

  boolean stalledClosedByClient() {
    return stalledClosedByClient;
  }

  private void acceptLoop() {
    while (running) {
      try {
        Socket client = server.accept();
        sockets.add(client);
        if (accepted.getAndIncrement() == 0) {
          // the stalled connection: wait for the client to give up on it (EOF), reading nothing
          daemon(() -> awaitClose(client), "stalling-proxy-stalled").start();
        } else {
          Socket upstream = new Socket(InetAddress.getLoopbackAddress(), upstreamPort);
          sockets.add(upstream);
          daemon(() -> pump(client, upstream), "stalling-proxy-up").start();
          daemon(() -> pump(upstream, client), "stalling-proxy-down").start();
        }
      } catch (IOException e) {
        if (running) {
          throw new java.io.UncheckedIOException(e);
        }
        return;
      }
    }
  }

  private void awaitClose(Socket client) {
    try {
      // the client's greeting is read and never answered, until the client closes
      InputStream in = client.getInputStream();
      byte[] greeting = new byte[64];
      int n;
      do {
        n = in.read(greeting);
      } while (n >= 0);
      stalledClosedByClient = true;
    } catch (IOException e) {
      stalledClosedByClient = running; // a reset from the client is a close too
    }
  }

  private static void pump(Socket from, Socket to) {
    byte[] buf = new byte[8192];
    try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
      int n;
      while ((n = in.read(buf)) >= 0) {
        out.write(buf, 0, n);
        out.flush();
      }
    } catch (IOException e) {
      // one side closed: the other is closed below
    } finally {
      closeQuietly(from);
      closeQuietly(to);
    }
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // closing a test socket: nothing to do
    }
  }

  @Override
  public void close() throws IOException {
    running = false;
    server.close();
    sockets.forEach(StallingProxy::closeQuietly);
  }
}
