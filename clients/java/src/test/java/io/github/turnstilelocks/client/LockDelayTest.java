package io.github.turnstilelocks.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.turnstilelocks.client.TurnstileException.Reason;
import io.github.turnstilelocks.client.harness.Fleet;
import io.github.turnstilelocks.client.harness.FleetExtension;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The hold's lock-delay ({@link AcquireOptions#withLockDelay}) against a real coordinator and redis-server. */
@ExtendWith(FleetExtension.class)
class LockDelayTest {
  @Test
  void aRevokedHoldWithALockDelayKeepsTheLockFromEveryoneUntilTheDelayHasPassed(Fleet fleet) throws Exception {
    String name = "java/lock-delay";
    Duration delay = Duration.ofMillis(800);
    try (TurnstileClient holder = fleet.client("holder").build(); TurnstileClient other = fleet.client("other").build()) {
      Lock lock = holder.acquire(name, AcquireOptions.lockDelay(delay).withOwner("h"));
      long revokedAt = System.nanoTime();
      fleet.revoke(name, holder.sessionId(), lock.owner());
      assertTrue(other.tryAcquire(name).isEmpty(), "a try-once during the delay finds the lock taken");
      long left = ProtoDuration.toNanos(fleet.describe(name).getDelayRemaining());
      assertTrue(left > 0 && left <= delay.toNanos(), "Describe shows the delay left: " + left + " ns");
      try (Lock next = other.acquire(name)) {
        // A lower bound, not a speed target: the delay started after revokedAt (2 ms of rounding).
        long waited = System.nanoTime() - revokedAt;
        assertTrue(waited >= delay.minusMillis(2).toNanos(), "granted " + waited + " ns after the revoke");
        assertTrue(!fleet.describe(name).hasDelayRemaining(), "the delay is over once the lock is granted again");
      }
    }
  }

  @Test
  void aLockDelayOverSixtySecondsIsRefusedNamingTheField(Fleet fleet) throws Exception {
    try (TurnstileClient client = fleet.client("bad").build()) {
      TurnstileException e = assertThrows(
          TurnstileException.class, () -> client.acquire("java/lock-delay-bad", AcquireOptions.lockDelay(Duration.ofSeconds(61))));
      assertEquals(Reason.INVALID_ARGUMENT, e.reason());
      assertTrue(e.getMessage().contains("acquire.lock_delay"), e.getMessage());
    }
  }
}
