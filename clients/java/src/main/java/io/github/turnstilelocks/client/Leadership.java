package io.github.turnstilelocks.client;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

/**
 * Leadership of an election: the exclusive {@link Lock} on the election's name and the value
 * observers see. {@link #lost()} completes before anyone else can be elected; the fencing token is
 * greater than every earlier leader's, so a resource refusing smaller tokens is safe from a leader
 * that paused past its lease. Close it (try-with-resources) to resign.
 */
public final class Leadership implements AutoCloseable {
  private final Lock lock;
  private volatile byte[] value;

  Leadership(Lock lock, byte[] value) {
    this.lock = lock;
    this.value = value.clone();
  }

  /** The lock the leadership is. */
  public Lock lock() {
    return lock;
  }

  /** Strictly greater than every earlier leader's token. */
  public long fencingToken() {
    return lock.fencingToken();
  }

  /** Completes (with the reason) when leadership is lost; never after resigning. */
  public CompletableFuture<LossReason> lost() {
    return lock.lost();
  }

  /** True while leading and the lease is confirmed on the local clock right now. */
  public boolean isValid() {
    return lock.isValid();
  }

  /** The value observers see: the campaign's, or the last one proclaimed. */
  public byte[] value() {
    return value.clone();
  }

  /** Replaces the value observers see (a leader announcing a new address, say). */
  public void proclaim(String value) throws InterruptedException {
    proclaim(value.getBytes(StandardCharsets.UTF_8));
  }

  /** As {@link #proclaim(String)}; throws TurnstileException LOST or NOT_HELD when no longer leading. */
  public void proclaim(byte[] value) throws InterruptedException {
    try {
      lock.session().proclaim(lock, value).get();
      this.value = value.clone();
    } catch (ExecutionException e) {
      throw Futures.turnstileCause(e);
    }
  }

  /**
   * Hands leadership to a waiting candidate in one step (see {@link Lock#transfer}): {@code toSessionId}
   * empty, the next candidate in line; else that session's candidate (a {@link ReleaseRequest#sessionId()}).
   * There is never a moment without a leader; the successor's token is higher.
   */
  public Successor handOver(String toSessionId) throws InterruptedException {
    return lock.transfer(toSessionId, "");
  }

  /** Calls {@code listener} when someone asks this leader to yield (see {@link Lock#onReleaseRequested}). */
  public void onReleaseRequested(java.util.function.Consumer<ReleaseRequest> listener) {
    lock.onReleaseRequested(listener);
  }

  /** Gives leadership up: the next candidate is elected at once. Idempotent. */
  public void resign() {
    lock.release();
  }

  /** Resigns at the end of a try-with-resources block. */
  @Override
  public void close() {
    resign();
  }
}
