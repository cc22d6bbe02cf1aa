package io.github.turnstilelocks.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.turnstilelocks.client.harness.CoordinatorProcess;
import io.github.turnstilelocks.client.harness.Fleet;
import io.github.turnstilelocks.client.harness.FleetExtension;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A coordinator that accepts TCP and never answers — a port that accepts and says nothing, and a
 * real coordinator SIGSTOPped — does not hang a caller: a first open fails CONNECTION naming the
 * address within the open timeout (default 5 s), a first acquire with a wait within wait + 1 s, and
 * on a session opened before the stop an acquire with a wait fails TIMEOUT by wait + 1 s.
 */
@ExtendWith(FleetExtension.class)
class SilentCoordinatorTest {
  /** Timers, a cancelled call and the callback pool on a shared 2-core machine. */
  private static final long SLACK_MS = 1500;
  private static final long OPEN_TIMEOUT_MS = 5000;

  /** A loopback port that accepts every connection and never writes; it reads and drops what arrives. */
  private static final class SilentPort implements AutoCloseable {
    final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    final List<Socket> accepted = new CopyOnWriteArrayList<>();
    final Thread acceptor = new Thread(this::acceptAll, "silent-port");

    SilentPort() throws IOException {
      acceptor.setDaemon(true);
      acceptor.start();
    }

    String address() {
      return "127.0.0.1:" + server.getLocalPort();
    }

    private void acceptAll() {
      try {
        while (true) {
          Socket socket = server.accept();
          accepted.add(socket);
          Thread reader = new Thread(() -> drain(socket), "silent-port-reader");
          reader.setDaemon(true);
          reader.start();
        }
      } catch (IOException closed) {
        // close() ends the loop
      }
    }

    private static void drain(Socket socket) {
      try (InputStream in = socket.getInputStream()) {
        in.transferTo(java.io.OutputStream.nullOutputStream());
      } catch (IOException closed) {
        // the socket was closed
      }
    }

    @Override
    public void close() throws Exception {
      server.close();
      for (Socket socket : accepted) socket.close();
      acceptor.join(5000);
    }
  }

  /** The failure of {@code acquire}, which must end between {@code minMs} and {@code boundMs} + SLACK_MS after {@code sent}. */
  private static TurnstileException failure(CompletableFuture<Lock> acquire, long sent, long minMs, long boundMs) {
    ExecutionException failed = assertThrows(ExecutionException.class, () -> acquire.get(boundMs + SLACK_MS, TimeUnit.MILLISECONDS),
        "the acquire failed within " + boundMs + " ms + " + SLACK_MS + " ms slack");
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
    assertTrue(tookMs >= minMs, "ended after " + tookMs + " ms, not before " + minMs + " ms");
    System.out.printf("silent coordinator: failed after %d ms (bound %d ms): %s%n", tookMs, boundMs, failed.getCause().getMessage());
    return Futures.turnstileCause(failed);
  }

  @Test
  void aFirstAcquireOnASilentPortFailsConnectionNamingItWithinTheOpenTimeout() throws Exception {
    try (SilentPort port = new SilentPort(); TurnstileClient client = TurnstileClient.builder(port.address()).build()) {
      long sent = System.nanoTime();
      TurnstileException e = failure(client.acquireAsync("java/silent", AcquireOptions.defaults()), sent, OPEN_TIMEOUT_MS - 100, OPEN_TIMEOUT_MS);
      assertEquals(TurnstileException.Reason.CONNECTION, e.reason(), e.getMessage());
      assertTrue(e.getMessage().contains(port.address() + " did not answer the session's open within 5000 ms"), e.getMessage());
    }
  }

  @Test
  void aFirstAcquireWithAWaitOnASilentPortFailsConnectionByTheWaitPlusOneSecond() throws Exception {
    try (SilentPort port = new SilentPort(); TurnstileClient client = TurnstileClient.builder(port.address()).build()) {
      long sent = System.nanoTime();
      CompletableFuture<Lock> attempt = client.acquireAsync("java/silent-wait", AcquireOptions.waitAtMost(Duration.ofMillis(500)));
      TurnstileException e = failure(attempt, sent, 1400, 1500);
      assertEquals(TurnstileException.Reason.CONNECTION, e.reason(), e.getMessage());
      assertTrue(e.getMessage().contains("(tried " + port.address() + ")"), e.getMessage());
    }
  }

  @Test
  void aStoppedCoordinatorFailsAFirstOpenAndTimesOutAnAcquireOnAnOpenSession(Fleet fleet) throws Exception {
    try (CoordinatorProcess stopped = CoordinatorProcess.start(fleet.redisUrl());
        TurnstileClient opened = TurnstileClient.builder(stopped.address()).clientName("opened-before-stop").build();
        TurnstileClient fresh = TurnstileClient.builder(stopped.address()).clientName("fresh").build()) {
      opened.tryAcquire("java/stopped-open").orElseThrow().release(); // the session is open before the stop
      stopped.signal("STOP");
      try {
        long sent = System.nanoTime();
        CompletableFuture<Lock> first = fresh.acquireAsync("java/stopped-first", AcquireOptions.defaults());
        CompletableFuture<Lock> onOpen = opened.acquireAsync("java/stopped-open", AcquireOptions.waitAtMost(Duration.ofMillis(500)));

        TurnstileException timeout = failure(onOpen, sent, 1400, 1500);
        assertEquals(TurnstileException.Reason.TIMEOUT, timeout.reason(), timeout.getMessage());
        assertTrue(timeout.getMessage().contains("no answer within acquire.wait"), timeout.getMessage());

        TurnstileException connection = failure(first, sent, OPEN_TIMEOUT_MS - 100, OPEN_TIMEOUT_MS);
        assertEquals(TurnstileException.Reason.CONNECTION, connection.reason(), connection.getMessage());
        assertTrue(connection.getMessage().contains(stopped.address() + " did not answer"), connection.getMessage());
      } finally {
        stopped.signal("CONT");
      }
    }
  }
}
