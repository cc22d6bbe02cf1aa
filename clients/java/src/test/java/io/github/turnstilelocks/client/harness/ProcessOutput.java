package io.github.turnstilelocks.client.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a child process's output (stdout with stderr merged) on a thread of its own, keeping all
 * of it for failure messages, and completes {@link #await} when a line matches the pattern.
 */
final class ProcessOutput {
  private final StringBuffer text = new StringBuffer();
  private final CompletableFuture<Matcher> match = new CompletableFuture<>();

  ProcessOutput(Process process, String label, Pattern pattern) {
    Thread reader = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line = in.readLine(); line != null; line = in.readLine()) {
          text.append(line).append('\n');
          Matcher m = pattern.matcher(line);
          if (!match.isDone() && m.find()) match.complete(m);
        }
      } catch (IOException e) {
        // The process is gone.
      }
      match.completeExceptionally(new IllegalStateException(label + " exited before it was ready:\n" + text));
    }, "test-output-" + label);
    reader.setDaemon(true);
    reader.start();
  }

  /** Waits up to {@code timeout} for the first line that matches; fails with the output so far. */
  Matcher await(Duration timeout) throws Exception {
    try {
      return match.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException("no ready line within " + timeout + ":\n" + text, e);
    }
  }

  String text() {
    return text.toString();
  }
}
