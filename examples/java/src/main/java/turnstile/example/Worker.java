package turnstile.example;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import turnstile.v1.LockServiceGrpc.LockServiceStub;

/**
 * One worker: its own session, then {@code rounds} times acquire the lock (waiting up to
 * {@code wait}), log "enter", hold, log "exit", release. A retryable {@code failed} (TIMEOUT,
 * BUSY, UNAVAILABLE, EXPIRED) or a lock lost mid-round repeats the round; anything else ends it.
 */
final class Worker implements Callable<Void> {
  /** What a worker does; {@code log} may be null (nothing is logged to a file). */
  record Config(String name, String lock, int rounds, Duration hold, Duration maxWait, Duration ttl, SharedLog log) {}

  private final LockServiceStub stub;
  private final Config config;

  Worker(LockServiceStub stub, Config config) {
    this.stub = stub;
    this.config = config;
  }

  @Override
  public Void call() throws Exception {
    try (Session session = Session.open(stub, config.name(), config.ttl(), Duration.ofSeconds(10))) {
      for (int round = 1, attempt = 1; round <= config.rounds(); attempt++) {
        // A fresh owner per acquire: a retry right after a lock judged lost must not re-enter a
        // hold whose release is still on its way.
        String owner = config.name() + "/" + attempt;
        LockHandle lock;
        try {
          lock = session.acquire(config.lock(), owner, config.maxWait());
        } catch (FailedException e) {
          if (!e.retryable()) throw e;
          Main.log(config.name() + ": acquire " + config.lock() + ": " + e.getMessage() + "; retrying");
          continue;
        } catch (LostLockException e) {
          Main.log(config.name() + ": " + e.getMessage() + "; retrying");
          continue;
        }
        try {
          holdOnce(lock);
          round++;
        } catch (LostLockException e) {
          Main.log(config.name() + ": " + e.getMessage() + "; retrying the round");
        }
      }
    }
    return null;
  }

  // Each log line is written only while the lease is still valid locally; a lock lost meanwhile
  // logs "lost" and is not used again.
  private void holdOnce(LockHandle lock) throws Exception {
    if (!lock.isValid()) throw new LostLockException(lock, lock.endReason());
    append("enter", lock);
    Main.log(config.name() + ": holding " + lock.name() + " with fencing token " + Long.toUnsignedString(lock.fencingToken()));
    try {
      lock.lost().get(config.hold().toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException heldForTheWholeHold) {
      // The normal case: the lock outlived the hold.
    }
    if (!lock.isValid()) {
      append("lost", lock);
      String reason = lock.endReason();
      throw new LostLockException(lock, reason == null ? LostLockException.LEASE_UNCONFIRMED : reason);
    }
    append("exit", lock);
    lock.release();
  }

  private void append(String event, LockHandle lock) throws IOException {
    if (config.log() != null) config.log().append(event, config.name(), lock.fencingToken());
  }
}
