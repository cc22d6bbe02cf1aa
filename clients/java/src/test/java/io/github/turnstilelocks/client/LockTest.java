package io.github.turnstilelocks.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.turnstilelocks.client.TurnstileException.Reason;
import io.github.turnstilelocks.client.harness.Fleet;
import io.github.turnstilelocks.client.harness.FleetExtension;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Exclusive locks against a real coordinator and redis-server. */
@ExtendWith(FleetExtension.class)
class LockTest {
  private static final Duration LONG = Duration.ofSeconds(30);

  @Test
  void acquireAndReleaseWithTryWithResourcesFreesTheLockForTheNextHolder(Fleet fleet) throws Exception {
    String name = "java/acquire-release";
    try (TurnstileClient a = fleet.client("a").build(); TurnstileClient b = fleet.client("b").build()) {
      long first;
      try (Lock lock = a.acquire(name)) {
        first = lock.fencingToken();
        assertTrue(lock.isValid(), "a fresh lock is valid");
        assertEquals(a.sessionId(), fleet.describe(name).getHolders(0).getSessionId(), "the coordinator names a's session");
        assertTrue(b.tryAcquire(name).isEmpty(), "a second client's try-once finds it taken");
      }
      assertEquals(0, fleet.describe(name).getHoldersCount(), "released at the end of the try block");
      Optional<Lock> next = b.tryAcquire(name);
      assertTrue(next.isPresent(), "free again after the release");
      assertTrue(next.get().fencingToken() > first, "the next token is greater");
      assertEquals("done", b.withLock("java/with-lock", () -> "done"));
      next.get().release();
      next.get().release(); // a second release does nothing
      assertFalse(next.get().lost().isDone(), "a released lock is not reported lost");
    }
  }

  @Test
  void handsTheLockOnFirstInFirstOutBetweenClients(Fleet fleet) throws Exception {
    String name = "java/fifo";
    try (TurnstileClient holder = fleet.client("holder").build();
        TurnstileClient first = fleet.client("first").build();
        TurnstileClient second = fleet.client("second").build()) {
      Lock held = holder.acquire(name);
      List<String> grants = new CopyOnWriteArrayList<>();
      CompletableFuture<Lock> firstWaits = first.acquireAsync(name, AcquireOptions.defaults());
      // The recording stages are kept: get() on a future can return before its dependent stage has run.
      CompletableFuture<Void> firstRecorded = firstWaits.thenAccept(l -> grants.add("first"));
      fleet.awaitWaiters(name, 1);
      CompletableFuture<Lock> secondWaits = second.acquireAsync(name, AcquireOptions.defaults());
      CompletableFuture<Void> secondRecorded = secondWaits.thenAccept(l -> grants.add("second"));
      fleet.awaitWaiters(name, 2);
      held.release();
      Lock firstLock = firstWaits.get(30, TimeUnit.SECONDS);
      assertTrue(firstLock.fencingToken() > held.fencingToken());
      assertFalse(secondWaits.isDone(), "the second waiter still waits while the first holds");
      assertEquals(1, fleet.describe(name).getWaitersCount());
      firstLock.release();
      Lock secondLock = secondWaits.get(30, TimeUnit.SECONDS);
      assertTrue(secondLock.fencingToken() > firstLock.fencingToken());
      firstRecorded.get(30, TimeUnit.SECONDS);
      secondRecorded.get(30, TimeUnit.SECONDS);
      assertEquals(List.of("first", "second"), grants);
      secondLock.release();
    }
  }

  /** What a test does while a client named "the-holder" holds {@code name} and "waiter" is free to wait. */
  private interface WhileHeld {
    void run(TurnstileClient holder, Lock held, TurnstileClient waiter) throws Exception;
  }

  private static void whileHeld(Fleet fleet, String name, WhileHeld body) throws Exception {
    try (TurnstileClient holder = fleet.client("the-holder").build(); TurnstileClient waiter = fleet.client("waiter").build()) {
      Lock held = holder.acquire(name);
      body.run(holder, held, waiter);
      held.release();
    }
  }

  @Test
  void aWaitThatRunsOutFailsWithTimeoutNamingTheBlocker(Fleet fleet) throws Exception {
    String name = "java/timeout";
    whileHeld(fleet, name, (holder, held, waiter) -> {
      TurnstileException e = assertThrows(TurnstileException.class,
          () -> waiter.acquire(name, AcquireOptions.waitAtMost(Duration.ofMillis(300))));
      assertEquals(Reason.TIMEOUT, e.reason(), e.getMessage());
      assertEquals(1, e.blockedBy().size(), "one blocker");
      assertEquals("the-holder", e.blockedBy().get(0).clientName());
      assertEquals(holder.sessionId(), e.blockedBy().get(0).sessionId());
      assertEquals(held.fencingToken(), e.blockedBy().get(0).fencingToken());
      assertTrue(e.getMessage().contains("the-holder"), "the message names the blocker: " + e.getMessage());
    });
  }

  @Test
  void interruptingAWaitingAcquireWithdrawsItFromTheQueue(Fleet fleet) throws Exception {
    String name = "java/interrupt";
    whileHeld(fleet, name, (holder, held, waiter) -> {
      AtomicReference<Throwable> outcome = new AtomicReference<>();
      Thread waiting = new Thread(() -> {
        try {
          waiter.acquire(name, AcquireOptions.waitAtMost(LONG));
          outcome.set(new AssertionError("acquired although interrupted"));
        } catch (Throwable t) {
          outcome.set(t);
        }
      }, "test-waiter");
      waiting.start();
      fleet.awaitWaiters(name, 1);
      waiting.interrupt();
      waiting.join(30_000);
      assertTrue(outcome.get() instanceof InterruptedException, "acquire ends with InterruptedException: " + outcome.get());
      fleet.awaitWaiters(name, 0); // the cancel reached the coordinator: nobody waits any more
    });
    assertEquals(0, fleet.describe(name).getHoldersCount(), "nobody was granted the lock after its release");
  }

  @Test
  void cancellingAnAsyncAcquireWithdrawsIt(Fleet fleet) throws Exception {
    String name = "java/cancel-async";
    whileHeld(fleet, name, (holder, held, waiter) -> {
      CompletableFuture<Lock> waiting = waiter.acquireAsync(name, AcquireOptions.defaults());
      fleet.awaitWaiters(name, 1);
      assertTrue(waiting.cancel(true));
      fleet.awaitWaiters(name, 0);
    });
    assertEquals(0, fleet.describe(name).getHoldersCount(), "the cancelled waiter was not granted the lock after its release");
  }

  @Test
  void reEnteringWithTheSameOwnerKeepsTheTokenAndCountsHolds(Fleet fleet) throws Exception {
    String name = "java/reentry";
    try (TurnstileClient client = fleet.client("reentrant").build()) {
      AcquireOptions mine = AcquireOptions.defaults().withOwner("job-7");
      Lock outer = client.acquire(name, mine);
      Lock inner = client.acquire(name, mine);
      assertEquals(outer.fencingToken(), inner.fencingToken(), "a re-entry keeps the token");
      assertEquals(2, inner.holdCount());
      inner.release();
      assertEquals(1, fleet.describe(name).getHolders(0).getHoldCount(), "one hold left");
      assertTrue(outer.isValid());
      outer.release();
      assertEquals(0, fleet.describe(name).getHoldersCount());
    }
  }

  @Test
  void aRevokedHoldIsReportedLostWithReasonRevoked(Fleet fleet) throws Exception {
    String name = "java/revoked";
    try (TurnstileClient client = fleet.client("revoked").build()) {
      Lock lock = client.acquire(name);
      CompletableFuture<LossReason> heard = new CompletableFuture<>();
      lock.onLost(heard::complete);
      fleet.revoke(name, client.sessionId(), lock.owner());
      assertEquals(LossReason.REVOKED, heard.get(30, TimeUnit.SECONDS), "the listener hears the revocation");
      assertEquals(LossReason.REVOKED, lock.lost().getNow(null));
      assertFalse(lock.isValid());
      lock.release(); // a lost lock's release does nothing
    }
  }
}
