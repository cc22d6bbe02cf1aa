package io.github.turnstilelocks.client;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import turnstile.v1.Turnstile.LockMode;

/**
 * A read-write lock on one lock name: any number of readers (SHARED, limit 0) or one writer
 * (EXCLUSIVE). One FIFO queue serves both, so a waiting writer is not overtaken by later readers.
 * Upgrading a read hold with the same owner is refused (CONFLICT: it deadlocks). Made by
 * {@link TurnstileClient#readWriteLock}; every method returns Locks like {@link TurnstileClient#acquire}.
 */
public final class ReadWriteLock {
  private final TurnstileClient client;
  private final String name;

  ReadWriteLock(TurnstileClient client, String name) {
    this.client = client;
    this.name = name;
  }

  /** The lock name. */
  public String name() {
    return name;
  }

  /** Waits for a read hold (shared with other readers). */
  public Lock read(AcquireOptions options) throws InterruptedException {
    return Futures.await(readAsync(options), Lock::releaseAsync);
  }

  /** Waits for the write hold (exclusive). */
  public Lock write(AcquireOptions options) throws InterruptedException {
    return Futures.await(writeAsync(options), Lock::releaseAsync);
  }

  /** Asks for a read hold; cancelling the future withdraws it. */
  public CompletableFuture<Lock> readAsync(AcquireOptions options) {
    return client.acquireAsync(name, LockMode.LOCK_MODE_SHARED, 0, options);
  }

  /** Asks for the write hold; cancelling the future withdraws it. */
  public CompletableFuture<Lock> writeAsync(AcquireOptions options) {
    return client.acquireAsync(name, LockMode.LOCK_MODE_EXCLUSIVE, 0, options);
  }

  /** Tries a read hold once: empty while a writer holds the lock or anyone waits. */
  public Optional<Lock> tryRead() throws InterruptedException {
    return client.tryOnce(readAsync(AcquireOptions.waitAtMost(Duration.ZERO)));
  }

  /** Tries the write hold once: empty while anyone holds the lock or waits. */
  public Optional<Lock> tryWrite() throws InterruptedException {
    return client.tryOnce(writeAsync(AcquireOptions.waitAtMost(Duration.ZERO)));
  }
}
