package io.github.turnstilelocks.client.harness;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real coordinator, `node bin/turnstile.js serve --redis URL --listen 127.0.0.1:0 ...`, whose
 * bound port is read from its "listening" log line. {@link #drain()} sends SIGTERM (it ends every
 * session with UNAVAILABLE and exits), {@link #crash()} SIGKILL; {@link #close()} kills it if it
 * still runs.
 */
public final class CoordinatorProcess implements AutoCloseable {
  private static final Pattern LISTENING = Pattern.compile("\"port\":(\\d+)[^\\n]*\"msg\":\"listening\"");

  private final Process process;
  private final ProcessOutput output;
  private final String address;

  private CoordinatorProcess(Process process, ProcessOutput output, String address) {
    this.process = process;
    this.output = output;
    this.address = address;
  }

  /** Starts a coordinator on {@code redisUrl} with extra flags and waits until it listens. */
  public static CoordinatorProcess start(String redisUrl, String... extraArgs) throws Exception {
    List<String> command = new ArrayList<>(List.of("node", Requirements.repo().resolve("bin/turnstile.js").toString(),
        "serve", "--redis", redisUrl, "--listen", "127.0.0.1:0"));
    command.addAll(List.of(extraArgs));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    ProcessOutput output = new ProcessOutput(process, "coordinator", LISTENING);
    try {
      Matcher m = output.await(Duration.ofSeconds(30));
      return new CoordinatorProcess(process, output, "127.0.0.1:" + m.group(1));
    } catch (Exception e) {
      process.destroyForcibly();
      throw e;
    }
  }

  /** host:port it listens on. */
  public String address() {
    return address;
  }

  /** SIGTERM, as an operator's drain, and waits for the exit; returns the exit code. */
  public int drain() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(30, TimeUnit.SECONDS)) throw new IllegalStateException("coordinator did not exit after SIGTERM:\n" + output.text());
    return process.exitValue();
  }

  /** SIGKILL, as a crash, and waits for the exit. */
  public void crash() throws InterruptedException {
    process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
  }

  /** Sends {@code signal} (such as "STOP" or "CONT") with kill(1) and waits for kill to return. */
  public void signal(String signal) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
    if (kill.waitFor() != 0) throw new IllegalStateException("kill -" + signal + " failed");
  }

  /** Everything it logged so far. */
  public String output() {
    return output.text();
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
  }
}
