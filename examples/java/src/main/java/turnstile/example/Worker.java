package turnstile.example;

import io.github.turnstilelocks.client.AcquireOptions;
import io.github.turnstilelocks.client.Lock;
import io.github.turnstilelocks.client.TurnstileClient;
import io.github.turnstilelocks.client.TurnstileClientBuilder;
import io.github.turnstilelocks.client.TurnstileException;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One worker: its own client (one session), then {@code rounds} times acquire the lock (waiting up
 * to {@code wait}), log "enter", hold, log "exit", release. A retryable failure (TIMEOUT, BUSY,
 * UNAVAILABLE, EXPIRED, a grant already lost) or a lock lost mid-round repeats the round; a session
 * that ended is replaced by the client on the next acquire; anything else ends the worker.
 */
final class Worker implements Callable<Void> {
  /** What a worker does; {@code log} may be null (nothing is logged to a file). */
  record Config(String name, String lock, int rounds, Duration hold, Duration maxWait, SharedLog log) {}

  private final TurnstileClientBuilder client;
  private final Config config;

  Worker(TurnstileClientBuilder client, Config config) {
    this.client = client;
    this.config = config;
  }

  @Override
  public Void call() throws Exception {
    try (TurnstileClient session = client.build()) {
      for (int round = 1; round <= config.rounds(); ) {
        Lock lock;
        try {
          lock = session.acquire(config.lock(), AcquireOptions.waitAtMost(config.maxWait()));
        } catch (TurnstileException e) {
          boolean again = e.reason().retryable() || e.reason() == TurnstileException.Reason.SESSION_ENDED;
          if (!again) throw e;
          Main.log(config.name() + ": acquire " + config.lock() + ": " + e.getMessage() + "; retrying");
          continue;
        }
        if (holdOnce(lock)) round++;
      }
    }
    return null;
  }

  // Each log line is written only while the lease is still valid locally; a lock lost meanwhile
  // logs "lost" and is not used again. Returns whether the round was done.
  private boolean holdOnce(Lock lock) throws IOException {
    if (!lock.isValid()) return false;
    append("enter", lock);
    Main.log(config.name() + ": holding " + lock.name() + " with fencing token " + Long.toUnsignedString(lock.fencingToken()));
    try {
      Main.log(config.name() + ": lost " + lock.name() + " (" + lock.lost().get(config.hold().toNanos(), TimeUnit.NANOSECONDS) + ")");
    } catch (TimeoutException heldForTheWholeHold) {
      // The normal case: the lock outlived the hold.
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    if (!lock.isValid()) {
      append("lost", lock);
      return false;
    }
    append("exit", lock);
    lock.release();
    return true;
  }

  private void append(String event, Lock lock) throws IOException {
    if (config.log() != null) config.log().append(event, config.name(), lock.fencingToken());
  }
}
