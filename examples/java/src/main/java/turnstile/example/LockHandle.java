package turnstile.example;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;

/**
 * One held lock. {@link #lost()} completes (with the reason) as soon as the lock must no longer be
 * used: the server said {@code lost}, the session ended, or the lease could not be confirmed on
 * the local clock in time. Check {@link #isValid()} just before every use of the resource.
 */
public final class LockHandle {
  static final String RELEASED = "released";

  private final Session session;
  private final String name;
  private final String owner;
  private final long fencingToken;
  final long acquireSentNanos;
  private final CompletableFuture<String> lost = new CompletableFuture<>();
  // Guarded by the session's monitor.
  String endReason;
  ScheduledFuture<?> leaseTimer;

  LockHandle(Session session, String name, String owner, long fencingToken, long acquireSentNanos) {
    this.session = session;
    this.name = name;
    this.owner = owner;
    this.fencingToken = fencingToken;
    this.acquireSentNanos = acquireSentNanos;
  }

  public String name() {
    return name;
  }

  public String owner() {
    return owner;
  }

  /** Strictly greater than every token issued before for this name; pass it to the resource. */
  public long fencingToken() {
    return fencingToken;
  }

  /** Completes with the lost reason when the lock is lost; never completes after a release. */
  public CompletableFuture<String> lost() {
    return lost;
  }

  /** True while the lease is confirmed on the local monotonic clock right now. */
  public boolean isValid() {
    return session.held.isValid(this);
  }

  /** The reason the lock is no longer held ("released" after release), or null while held. */
  public String endReason() {
    return session.held.endReasonOf(this);
  }

  /** Releases this hold and waits for {@code released}; a second call does nothing. */
  public void release() throws FailedException, LostLockException, InterruptedException {
    session.release(this);
  }

  void markLost(String reason) {
    lost.complete(reason);
  }
}
