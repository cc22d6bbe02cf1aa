package io.github.turnstilelocks.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.turnstilelocks.client.TurnstileException.Reason;
import io.github.turnstilelocks.client.harness.Fleet;
import io.github.turnstilelocks.client.harness.FleetExtension;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Semaphores and read-write locks: SHARED holds with the server's limit and one FIFO queue. */
@ExtendWith(FleetExtension.class)
class SemaphoreTest {
  @Test
  void aSemaphoreAdmitsAtMostItsLimitAndHandsAFreedPermitToTheWaiter(Fleet fleet) throws Exception {
    String name = "java/semaphore";
    try (TurnstileClient a = fleet.client("a").build(); TurnstileClient b = fleet.client("b").build();
        TurnstileClient c = fleet.client("c").build()) {
      Lock first = a.semaphore(name, 2).acquire(AcquireOptions.defaults());
      Lock second = b.semaphore(name, 2).acquire(AcquireOptions.defaults());
      assertNotEquals(first.fencingToken(), second.fencingToken(), "every permit has its own token");
      assertEquals(2, fleet.describe(name).getHoldersCount());
      assertTrue(c.semaphore(name, 2).tryAcquire().isEmpty(), "a third permit is refused");
      TurnstileException conflict = assertThrows(TurnstileException.class, () -> c.semaphore(name, 3).tryAcquire());
      assertEquals(Reason.CONFLICT, conflict.reason(), "another limit than the one in force: " + conflict.getMessage());
      CompletableFuture<Lock> third = c.semaphore(name, 2).acquireAsync(AcquireOptions.defaults());
      fleet.awaitWaiters(name, 1);
      assertFalse(third.isDone());
      first.release();
      Lock granted = third.get(30, TimeUnit.SECONDS);
      assertEquals(2, fleet.describe(name).getHoldersCount(), "still two holders");
      granted.release();
      second.release();
      assertThrows(TurnstileException.class, () -> a.semaphore(name, 0));
    }
  }

  @Test
  void readersShareAndAWaitingWriterIsNotOvertakenByLaterReaders(Fleet fleet) throws Exception {
    String name = "java/read-write";
    try (TurnstileClient a = fleet.client("a").build(); TurnstileClient b = fleet.client("b").build()) {
      ReadWriteLock rwA = a.readWriteLock(name);
      ReadWriteLock rwB = b.readWriteLock(name);
      Lock r1 = rwA.read(AcquireOptions.defaults());
      Lock r2 = rwB.read(AcquireOptions.defaults());
      assertTrue(rwB.tryWrite().isEmpty(), "no writer while readers hold");
      CompletableFuture<Lock> writer = rwB.writeAsync(AcquireOptions.defaults());
      fleet.awaitWaiters(name, 1);
      assertTrue(rwA.tryRead().isEmpty(), "a later reader does not overtake the waiting writer");
      r1.release();
      assertFalse(writer.isDone());
      r2.release();
      Lock w = writer.get(30, TimeUnit.SECONDS);
      assertTrue(w.fencingToken() > r2.fencingToken());
      w.release();
    }
  }
}
