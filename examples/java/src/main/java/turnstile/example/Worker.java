package turnstile.example;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One worker: its own session, then {@code rounds} times acquire the lock (waiting up to
 * {@code wait}), log "enter", hold, log "exit", release. A retryable {@code failed} (TIMEOUT,
 * BUSY, UNAVAILABLE, EXPIRED) or a lock lost mid-round repeats the round; a session that ended
 * (it could not be resumed) is replaced by a new one; anything else ends the worker.
 */
final class Worker implements Callable<Void> {
  /** What a worker does; {@code log} may be null (nothing is logged to a file). */
  record Config(String name, String lock, int rounds, Duration hold, Duration maxWait, Duration ttl, SharedLog log) {}

  private final Coordinators coordinators;
  private final Config config;

  Worker(Coordinators coordinators, Config config) {
    this.coordinators = coordinators;
    this.config = config;
  }

  @Override
  public Void call() throws Exception {
    Session session = Session.open(coordinators, config.name(), config.ttl(), Duration.ofSeconds(10));
    try {
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
        } catch (SessionEndedException e) {
          Main.log(config.name() + ": " + e.getMessage() + "; opening a new session");
          session.close();
          session = Session.open(coordinators, config.name(), config.ttl(), Duration.ofSeconds(10));
          continue;
        }
        try {
          holdOnce(lock);
          round++;
        } catch (LostLockException e) {
          Main.log(config.name() + ": " + e.getMessage() + "; retrying the round");
        } catch (SessionEndedException e) {
          // The hold was used until "exit"; the store lets it go when the ended session's lease runs out.
          Main.log(config.name() + ": release: " + e.getMessage());
          round++;
        }
      }
    } finally {
      session.close();
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
