package io.github.turnstilelocks.client;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import turnstile.v1.Turnstile.LockMode;

/**
 * A counting semaphore on one lock name: at most {@link #limit()} holders at once across every
 * client and coordinator (docs/semaphores.md). The server owns the count: the first claim sets the
 * limit until nobody holds or waits for the name; a claim naming another limit meanwhile fails with
 * CONFLICT. Waiters are served first in, first out. Each permit is a {@link Lock} with its own lease,
 * fencing token and lost future. Made by {@link TurnstileClient#semaphore}.
 */
public final class Semaphore {
  private final TurnstileClient client;
  private final String name;
  private final int limit;

  Semaphore(TurnstileClient client, String name, int limit) {
    if (limit < 1) {
      throw new TurnstileException(TurnstileException.Reason.INVALID_ARGUMENT, "semaphore limit must be at least 1, got "
          + limit + " (for any number of shared holders use readWriteLock(name).read())", null);
    }
    this.client = client;
    this.name = name;
    this.limit = limit;
  }

  /** The lock name. */
  public String name() {
    return name;
  }

  /** How many holders may hold a permit at once. */
  public int limit() {
    return limit;
  }

  /** Waits for a permit as {@code options} say; errors and interruption as {@link TurnstileClient#acquire}. */
  public Lock acquire(AcquireOptions options) throws InterruptedException {
    return Futures.await(acquireAsync(options), Lock::releaseAsync);
  }

  /** Asks for a permit; cancelling the future withdraws the request. */
  public CompletableFuture<Lock> acquireAsync(AcquireOptions options) {
    return client.acquireAsync(name, LockMode.LOCK_MODE_SHARED, limit, options);
  }

  /** Tries once: empty when every permit is taken or others wait. */
  public Optional<Lock> tryAcquire() throws InterruptedException {
    return client.tryOnce(acquireAsync(AcquireOptions.waitAtMost(java.time.Duration.ZERO)));
  }

  /**
   * Runs {@code body} holding a permit and releases it after; an exception from the body wins. The
   * body runs in an {@link OwnerScope} of the permit's owner (see {@link TurnstileClient#withLock}).
   */
  public <T> T withPermit(AcquireOptions options, LockBody<T> body) throws Exception {
    try (Lock permit = acquire(options); OwnerScope scope = client.scopeOf(permit.owner())) {
      return body.run(permit);
    }
  }
}
