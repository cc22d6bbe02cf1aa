package io.github.turnstilelocks.client;

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
 * deadline and, unless a newer keepalive ack moved it, loses the lock locally (LEASE_UNCONFIRMED)
 * and hands it to {@code releaseLost}, which sends a best-effort release. Handles of one holder
 * (name, owner: re-entries) are kept together. Shares the session's monitor.
 */
final class HeldLocks {
  record Key(String name, String owner) {}

  private final Object mu;
  private final LeaseClock clock;
  private final ScheduledExecutorService timers;
  private final Consumer<Lock> releaseLost;
  private final Map<Key, List<Lock>> held = new HashMap<>();

  HeldLocks(Object mu, LeaseClock clock, ScheduledExecutorService timers, Consumer<Lock> releaseLost) {
    this.mu = mu;
    this.clock = clock;
    this.timers = timers;
    this.releaseLost = releaseLost;
  }

  /** Tracks a granted lock; called on the response thread, before any later message is handled. */
  void add(Lock lock) {
    synchronized (mu) {
      held.computeIfAbsent(keyOf(lock), k -> new ArrayList<>()).add(lock);
      arm(lock);
    }
  }

  boolean isValid(Lock lock) {
    return remainingNanos(lock) > 0;
  }

  long remainingNanos(Lock lock) {
    synchronized (mu) {
      if (lock.released || lock.lossReason != null) return 0;
      return clock.deadlineNanos(lock.acquireSentNanos) - System.nanoTime();
    }
  }

  /** Stops judging a lock that is being released; false when it was released or lost already. */
  boolean beginRelease(Lock lock) {
    synchronized (mu) {
      if (lock.released || lock.lossReason != null) return false;
      lock.released = true;
      stopTracking(lock);
      return true;
    }
  }

  /** Applies a server-reported {@code lost} to every handle of the matching holder. */
  void lostReported(Lost lost) {
    LossReason reason = switch (lost.getReason()) {
      case LOST_REASON_REVOKED -> LossReason.REVOKED;
      case LOST_REASON_SESSION_ENDED -> LossReason.SESSION_ENDED;
      default -> LossReason.EXPIRED;
    };
    synchronized (mu) {
      for (Lock lock : List.copyOf(held.getOrDefault(new Key(lost.getName(), lost.getOwner()), List.of()))) {
        if (lock.fencingToken() == lost.getFencingToken()) lose(lock, reason);
      }
    }
  }

  /** The holder of {@code lock} handed its hold over: every handle of it ends as released. */
  void handedOver(Lock lock) {
    synchronized (mu) {
      for (Lock handle : List.copyOf(held.getOrDefault(keyOf(lock), List.of()))) {
        if (handle.fencingToken() != lock.fencingToken() || handle.released || handle.lossReason != null) continue;
        handle.released = true;
        stopTracking(handle);
      }
    }
  }

  /** Tells every live handle of the holder {@code request} names that someone asks it to let go. */
  void releaseRequested(ReleaseRequest request) {
    List<Lock> handles;
    synchronized (mu) {
      handles = List.copyOf(held.getOrDefault(new Key(request.name(), request.owner()), List.of()));
    }
    for (Lock lock : handles) lock.requested(request);
  }

  /** Re-arms every timer after a keepalive ack moved the deadlines forward. */
  void rearmAll() {
    synchronized (mu) {
      for (List<Lock> locks : held.values()) for (Lock lock : locks) arm(lock);
    }
  }

  /** Loses, now, every lock whose deadline has passed (timers can fire late). */
  void checkLeases() {
    List<Lock> expired = new ArrayList<>();
    synchronized (mu) {
      long now = System.nanoTime();
      for (List<Lock> locks : held.values()) {
        for (Lock lock : locks) if (clock.deadlineNanos(lock.acquireSentNanos) - now <= 0) expired.add(lock);
      }
      for (Lock lock : expired) lose(lock, LossReason.LEASE_UNCONFIRMED);
    }
    for (Lock lock : expired) releaseLost.accept(lock);
  }

  /** The held locks as resume claims: one per holder, hold_count = its live handles + {@code inFlight}. */
  List<HeldLock> claims(Map<Key, HeldLock> releasesInFlight) {
    synchronized (mu) {
      Map<Key, HeldLock> claims = new HashMap<>(releasesInFlight);
      for (Map.Entry<Key, List<Lock>> e : held.entrySet()) {
        if (e.getValue().isEmpty()) continue;
        HeldLock inFlight = claims.get(e.getKey());
        int count = e.getValue().size() + (inFlight == null ? 0 : inFlight.getHoldCount());
        claims.put(e.getKey(), claimOf(e.getValue().get(0)).toBuilder().setHoldCount(count).build());
      }
      return new ArrayList<>(claims.values());
    }
  }

  /** After a resume: keeps (re-arms) the holders {@code stillHeld} lists with the same token, loses the rest. */
  void keepOnly(List<HeldLock> stillHeld) {
    synchronized (mu) {
      for (List<Lock> locks : List.copyOf(held.values())) {
        for (Lock lock : List.copyOf(locks)) {
          boolean kept = stillHeld.stream().anyMatch(h -> h.getName().equals(lock.name())
              && h.getOwner().equals(lock.owner()) && h.getFencingToken() == lock.fencingToken());
          if (kept) arm(lock);
          else lose(lock, LossReason.EXPIRED);
        }
      }
    }
  }

  /** How many handles are held. */
  int size() {
    synchronized (mu) {
      return held.values().stream().mapToInt(List::size).sum();
    }
  }

  /** Loses every held lock (the session ended). */
  void loseAll(LossReason reason) {
    synchronized (mu) {
      for (List<Lock> locks : List.copyOf(held.values())) for (Lock lock : List.copyOf(locks)) lose(lock, reason);
    }
  }

  static HeldLock claimOf(Lock lock) {
    return HeldLock.newBuilder().setName(lock.name()).setOwner(lock.owner()).setFencingToken(lock.fencingToken())
        .setHoldCount(1).build();
  }

  static Key keyOf(Lock lock) {
    return new Key(lock.name(), lock.owner());
  }

  private void arm(Lock lock) {
    if (lock.released || lock.lossReason != null) return;
    if (lock.leaseTimer != null) lock.leaseTimer.cancel(false);
    long delay = clock.deadlineNanos(lock.acquireSentNanos) - System.nanoTime();
    lock.leaseTimer = timers.schedule(() -> checkLease(lock), Math.max(0, delay), TimeUnit.NANOSECONDS);
  }

  // Runs at the lease deadline: unless a newer ack moved it, the lock is lost locally.
  private void checkLease(Lock lock) {
    synchronized (mu) {
      if (lock.released || lock.lossReason != null) return;
      if (clock.deadlineNanos(lock.acquireSentNanos) - System.nanoTime() > 0) {
        arm(lock);
        return;
      }
      lose(lock, LossReason.LEASE_UNCONFIRMED);
    }
    releaseLost.accept(lock);
  }

  private void lose(Lock lock, LossReason reason) {
    if (lock.released || lock.lossReason != null) return;
    lock.lossReason = reason;
    stopTracking(lock);
    lock.lostNow.complete(reason);
  }

  private void stopTracking(Lock lock) {
    if (lock.leaseTimer != null) lock.leaseTimer.cancel(false);
    List<Lock> locks = held.get(keyOf(lock));
    if (locks == null) return;
    locks.remove(lock);
    if (locks.isEmpty()) held.remove(keyOf(lock));
  }
}
