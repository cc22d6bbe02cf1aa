package io.github.turnstilelocks.client;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.function.Consumer;

/**
 * One hold of a lock (or a semaphore permit, a read or write hold). {@link #lost()} completes
 * before the coordinator can hand the lock to anyone else — when the client's own lease clock runs
 * past the last acknowledged keepalive, when the server reports it expired or revoked, or when the
 * session ends — so stop using the resource then. Release it with {@link #release()} or
 * try-with-resources; check {@link #isValid()} right before each use of the protected resource and
 * pass {@link #fencingToken()} to it.
 */
public final class Lock implements AutoCloseable {
  private final Session session;
  private final String name;
  private final String owner;
  private final long fencingToken;
  private final String fencingProof;
  private final int holdCount;
  final long acquireSentNanos;
  // Completed on the thread that finds the loss (so isValid() agrees at once); users get a view
  // completed on the client's callback pool, so their code never runs on its timer or gRPC threads.
  final CompletableFuture<LossReason> lostNow = new CompletableFuture<>();
  private final CompletableFuture<LossReason> lost;
  // Guarded by the session's monitor.
  boolean released;
  LossReason lossReason;
  ScheduledFuture<?> leaseTimer;
  private final List<Consumer<ReleaseRequest>> requestListeners = new CopyOnWriteArrayList<>();

  Lock(Session session, String name, String owner, long fencingToken, String fencingProof, int holdCount,
      long acquireSentNanos) {
    this.session = session;
    this.name = name;
    this.owner = owner;
    this.fencingToken = fencingToken;
    this.fencingProof = fencingProof;
    this.holdCount = holdCount;
    this.acquireSentNanos = acquireSentNanos;
    this.lost = lostNow.thenApplyAsync(reason -> reason, session.callbacks());
  }

  /** The lock's name. */
  public String name() {
    return name;
  }

  /** The reentrancy key: handles with the same owner in one session share one holder. */
  public String owner() {
    return owner;
  }

  /** Strictly greater than every token issued before for this name (a re-entry keeps it). */
  public long fencingToken() {
    return fencingToken;
  }

  /**
   * The grant's signed fencing proof: a compact JWS binding the lock name, {@link #fencingToken()}
   * and the holder, which resources verify ({@code fencing.FencingProofs}, {@code
   * fencing.RedisFenceGuard}; docs/fencing.md). Empty when the coordinator runs without {@code
   * --fencing-key}.
   */
  public String fencingProof() {
    return fencingProof;
  }

  /** The holder's hold count when this handle was granted (1 for a first acquire). */
  public int holdCount() {
    return holdCount;
  }

  /**
   * Completes with the reason when the lock is lost (never after a release). Reading it re-checks
   * the lease, so a late timer cannot hide an expiry. Dependent actions run on the client's
   * callback threads.
   */
  public CompletableFuture<LossReason> lost() {
    session.held.checkLeases();
    return lost.copy();
  }

  /** Calls {@code listener} (on a client callback thread) when the lock is lost. */
  public void onLost(Consumer<LossReason> listener) {
    lost.thenAccept(listener);
  }

  /** True while held and the lease is confirmed on the local monotonic clock right now. */
  public boolean isValid() {
    return session.held.isValid(this);
  }

  /** Time left of the local lease (zero once released or lost). */
  public Duration leaseRemaining() {
    return Duration.ofNanos(Math.max(0, session.held.remainingNanos(this)));
  }

  /**
   * Releases this hold and waits for the coordinator's answer. Does nothing when it was released
   * or lost already. Interrupted, it returns at once with the interrupt flag set (the release is
   * on its way). Throws TurnstileException when the coordinator refuses it.
   */
  public void release() {
    try {
      session.releaseAsync(this).get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.ExecutionException e) {
      throw Futures.turnstileCause(e);
    }
  }

  /** Sends the release; the future completes when the coordinator answered. */
  public CompletableFuture<Void> releaseAsync() {
    return session.releaseAsync(this);
  }

  /**
   * Calls {@code listener} (on a client callback thread) each time someone asks this holder to let go
   * (a release request, docs/elections.md). Nothing is enforced: the holder decides whether to release
   * or {@link #transfer}.
   */
  public void onReleaseRequested(Consumer<ReleaseRequest> listener) {
    requestListeners.add(listener);
  }

  void requested(ReleaseRequest request) {
    for (Consumer<ReleaseRequest> listener : requestListeners) {
      session.callbacks().execute(() -> listener.accept(request));
    }
  }

  /**
   * Hands this holder's exclusive hold (every handle of it) to a waiting (session, owner) in one step
   * (docs/elections.md): the successor holds with a new, higher token and the lock is never without a
   * holder. {@code toSessionId} empty: the head of the queue; {@code toOwner} empty: that session's first
   * waiter. Returns the successor once the coordinator made the transfer; this handle is then released.
   * Throws TurnstileException NOT_FOUND (naming who does wait), NOT_HELD, CONFLICT (a shared hold) or
   * LOST. Stop using the protected resource first: the successor may act before this returns.
   */
  public Successor transfer(String toSessionId, String toOwner) throws InterruptedException {
    try {
      return session.transfer(this, toSessionId, toOwner).get();
    } catch (ExecutionException e) {
      throw Futures.turnstileCause(e);
    }
  }

  /** Releases at the end of a try-with-resources block (see {@link #release()}). */
  @Override
  public void close() {
    release();
  }

  Session session() {
    return session;
  }

  @Override
  public String toString() {
    return "Lock{" + name + ", owner " + owner + ", token " + Long.toUnsignedString(fencingToken) + "}";
  }
}
