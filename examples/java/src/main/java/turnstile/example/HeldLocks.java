package turnstile.example;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import turnstile.v1.Turnstile.HeldLock;
import turnstile.v1.Turnstile.Lost;

/**
 * The locks a session holds, each judged on the session's LeaseClock: a timer per lock fires at its
 * deadline and, unless a newer keepalive ack moved the deadline, loses the lock locally and hands
 * it to {@code releaseLost} (which sends a best-effort release). Shares the session's monitor.
 */
final class HeldLocks {
  private record Key(String name, String owner) {}

  private final Object mu;
  private final LeaseClock clock;
  private final ScheduledExecutorService timers;
  private final Consumer<LockHandle> releaseLost;
  private final Map<Key, LockHandle> held = new HashMap<>();

  HeldLocks(Object mu, LeaseClock clock, ScheduledExecutorService timers, Consumer<LockHandle> releaseLost) {
    this.mu = mu;
    this.clock = clock;
    this.timers = timers;
    this.releaseLost = releaseLost;
  }

  /** Tracks a granted lock; call it on the response thread, before any later message is handled. */
  void add(LockHandle lock) {
    synchronized (mu) {
      held.put(keyOf(lock), lock);
      arm(lock);
    }
  }

  boolean isValid(LockHandle lock) {
    synchronized (mu) {
      return lock.endReason == null && clock.deadlineNanos(lock.acquireSentNanos) - System.nanoTime() > 0;
    }
  }

  String endReasonOf(LockHandle lock) {
    synchronized (mu) {
      return lock.endReason;
    }
  }

  /**
   * Stops judging a lock that is being released. Returns false when it was released already;
   * throws when it was lost.
   */
  boolean beginRelease(LockHandle lock) throws LostLockException {
    synchronized (mu) {
      if (LockHandle.RELEASED.equals(lock.endReason)) return false;
      if (lock.endReason != null) throw new LostLockException(lock, lock.endReason);
      stopTracking(lock, LockHandle.RELEASED);
      return true;
    }
  }

  /** Applies a server-reported {@code lost} to the matching hold. */
  void lostReported(Lost lost) {
    synchronized (mu) {
      LockHandle lock = held.get(new Key(lost.getName(), lost.getOwner()));
      if (lock == null || lock.fencingToken() != lost.getFencingToken()) return;
      lose(lock, switch (lost.getReason()) {
        case LOST_REASON_EXPIRED -> LostLockException.EXPIRED;
        case LOST_REASON_REVOKED -> LostLockException.REVOKED;
        case LOST_REASON_SESSION_ENDED -> LostLockException.SESSION_ENDED;
        default -> "unknown";
      });
    }
  }

  /** Re-arms every timer after a keepalive ack moved the deadlines forward. */
  void rearmAll() {
    synchronized (mu) {
      for (LockHandle lock : held.values()) arm(lock);
    }
  }

  /** The held locks as claims for a resume: (name, owner, token), one hold each. */
  List<HeldLock> claims() {
    synchronized (mu) {
      List<HeldLock> claims = new ArrayList<>();
      for (LockHandle lock : held.values()) claims.add(claimOf(lock));
      return claims;
    }
  }

  /**
   * After a resume: keeps (and re-arms) the locks {@code stillHeld} lists with the same token, and
   * loses the others (their lease ran out in the store while the session was away).
   */
  void keepOnly(List<HeldLock> stillHeld) {
    synchronized (mu) {
      for (LockHandle lock : new ArrayList<>(held.values())) {
        boolean kept = stillHeld.stream()
            .anyMatch(h -> h.getName().equals(lock.name()) && h.getOwner().equals(lock.owner())
                && h.getFencingToken() == lock.fencingToken());
        if (kept) arm(lock);
        else lose(lock, LostLockException.EXPIRED);
      }
    }
  }

  static HeldLock claimOf(LockHandle lock) {
    return HeldLock.newBuilder()
        .setName(lock.name())
        .setOwner(lock.owner())
        .setFencingToken(lock.fencingToken())
        .setHoldCount(1)
        .build();
  }

  /** Loses every held lock (the session ended). */
  void loseAll(String reason) {
    synchronized (mu) {
      for (LockHandle lock : new ArrayList<>(held.values())) lose(lock, reason);
    }
  }

  private void arm(LockHandle lock) {
    if (lock.endReason != null) return;
    if (lock.leaseTimer != null) lock.leaseTimer.cancel(false);
    long delay = clock.deadlineNanos(lock.acquireSentNanos) - System.nanoTime();
    lock.leaseTimer = timers.schedule(() -> checkLease(lock), Math.max(0, delay), TimeUnit.NANOSECONDS);
  }

  // Runs at the lease deadline: unless a newer ack moved it, the lock is lost locally.
  private void checkLease(LockHandle lock) {
    synchronized (mu) {
      if (lock.endReason != null) return;
      if (clock.deadlineNanos(lock.acquireSentNanos) - System.nanoTime() > 0) {
        arm(lock);
        return;
      }
      lose(lock, LostLockException.LEASE_UNCONFIRMED);
    }
    releaseLost.accept(lock);
  }

  private void lose(LockHandle lock, String reason) {
    if (lock.endReason != null) return;
    stopTracking(lock, reason);
    lock.markLost(reason);
  }

  private void stopTracking(LockHandle lock, String reason) {
    lock.endReason = reason;
    if (lock.leaseTimer != null) lock.leaseTimer.cancel(false);
    held.remove(keyOf(lock), lock);
  }

  private static Key keyOf(LockHandle lock) {
    return new Key(lock.name(), lock.owner());
  }
}
