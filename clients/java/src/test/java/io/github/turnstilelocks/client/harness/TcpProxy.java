package io.github.turnstilelocks.client.harness;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A loopback TCP proxy in front of a coordinator that can {@link #freeze()}: it then stops passing
 * bytes either way (they wait in its buffers), as a network partition or a stalled peer would,
 * while both connections stay open, until {@link #thaw()}. Used to freeze one client's session
 * without touching the coordinator the other clients use.
 */
public final class TcpProxy implements AutoCloseable {
  private final ServerSocket server;
  private final String target;
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private final Object gate = new Object();
  private boolean frozen; // guarded by gate

  /** Starts proxying a free loopback port to {@code targetAddress} (host:port). */
  public TcpProxy(String targetAddress) throws IOException {
    this.target = targetAddress;
    server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::acceptLoop, "test-proxy-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** host:port to connect to instead of the target. */
  public String address() {
    return "127.0.0.1:" + server.getLocalPort();
  }

  /** Stops passing bytes in both directions until closed. */
  public void freeze() {
    synchronized (gate) {
      frozen = true;
    }
  }

  /** Passes bytes again, what waited in the buffers first, as a healed partition would. */
  public void thaw() {
    synchronized (gate) {
      frozen = false;
      gate.notifyAll();
    }
  }

  private void acceptLoop() {
    try {
      while (true) {
        Socket client = server.accept();
        String[] hostPort = target.split(":");
        Socket upstream = new Socket(hostPort[0], Integer.parseInt(hostPort[1]));
        sockets.add(client);
        sockets.add(upstream);
        pump(client, upstream);
        pump(upstream, client);
      }
    } catch (IOException closed) {
      // close() ends the loop.
    }
  }

  private void pump(Socket from, Socket to) throws IOException {
    InputStream in = from.getInputStream();
    OutputStream out = to.getOutputStream();
    Thread thread = new Thread(() -> {
      byte[] buffer = new byte[16384];
      try {
        for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
          synchronized (gate) {
            while (frozen) gate.wait();
          }
          out.write(buffer, 0, n);
          out.flush();
        }
      } catch (IOException | InterruptedException e) {
        // A socket was closed.
      } finally {
        closeQuietly(from);
        closeQuietly(to);
      }
    }, "test-proxy-pump");
    thread.setDaemon(true);
    thread.start();
  }

  @Override
  public void close() throws IOException {
    server.close();
    for (Socket socket : sockets) closeQuietly(socket);
    synchronized (gate) {
      frozen = false; // frozen pumps go on, find their sockets closed and end
      gate.notifyAll();
    }
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException ignored) {
      // Already closed.
    }
  }
}
