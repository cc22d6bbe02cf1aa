package io.github.turnstilelocks.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.turnstilelocks.client.TurnstileException.DeadlockStep;
import io.github.turnstilelocks.client.TurnstileException.Reason;
import io.github.turnstilelocks.client.harness.Fleet;
import io.github.turnstilelocks.client.harness.FleetExtension;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Deadlock detection as the Java client sees it, against a real coordinator and redis-server. */
@ExtendWith(FleetExtension.class)
class DeadlockTest {
  @Test
  void aCycleFailsTheYoungestWaitWithDeadlockAndTheOtherIsGrantedOnceTheVictimLetsGo(Fleet fleet) throws Exception {
    String x = "java/deadlock/x";
    String y = "java/deadlock/y";
    try (TurnstileClient a = fleet.client("worker-a").build(); TurnstileClient b = fleet.client("worker-b").build()) {
      a.acquire(x, AcquireOptions.defaults().withOwner("oa"));
      Lock yHeld = b.acquire(y, AcquireOptions.defaults().withOwner("ob"));
      CompletableFuture<Lock> aWaits = a.acquireAsync(y, AcquireOptions.defaults().withOwner("oa"));
      fleet.awaitWaiters(y, 1);
      CompletableFuture<Lock> bWaits = b.acquireAsync(x, AcquireOptions.defaults().withOwner("ob"));
      ExecutionException failed = assertThrows(ExecutionException.class, () -> bWaits.get(3, TimeUnit.SECONDS));
      TurnstileException e = assertInstanceOf(TurnstileException.class, failed.getCause());
      assertEquals(Reason.DEADLOCK, e.reason());
      assertFalse(e.reason().retryable(), "a deadlock is not retried as is");
      assertEquals(List.of(new DeadlockStep(b.sessionId(), "ob", "worker-b", e.deadlockCycle().get(0).requestId(), x),
          new DeadlockStep(a.sessionId(), "oa", "worker-a", e.deadlockCycle().get(1).requestId(), y)),
          e.deadlockCycle());
      assertTrue(e.getMessage().contains("deadlock: ("), e.getMessage());
      assertFalse(aWaits.isDone(), "a still waits while b holds y");
      yHeld.release();
      assertEquals(y, aWaits.get(30, TimeUnit.SECONDS).name());
    }
  }
}
