package io.github.turnstilelocks.client.harness;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/** A real redis-server on a free loopback port, without persistence; {@link #close()} stops it. */
public final class RedisProcess implements AutoCloseable {
  private final Process process;
  private final int port;

  private RedisProcess(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  /** Starts redis-server and waits until it accepts connections. */
  public static RedisProcess start() throws Exception {
    int port = freePort();
    Process process = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
        "--save", "", "--appendonly", "no").redirectErrorStream(true).start();
    ProcessOutput output = new ProcessOutput(process, "redis-server", Pattern.compile("Ready to accept connections"));
    try {
      output.await(Duration.ofSeconds(20));
    } catch (Exception e) {
      process.destroyForcibly();
      throw e;
    }
    return new RedisProcess(process, port);
  }

  /** redis://127.0.0.1:PORT */
  public String url() {
    return "redis://127.0.0.1:" + port;
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroyForcibly().waitFor();
  }

  static int freePort() throws java.io.IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
