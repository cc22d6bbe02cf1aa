package io.github.turnstilelocks.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.turnstilelocks.client.TurnstileException.Reason;
import io.github.turnstilelocks.client.harness.Fleet;
import io.github.turnstilelocks.client.harness.FleetExtension;
import java.time.Duration;
import java.util.List;
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

  @Test
  void aSetAcquiredWithALockDelayDelaysTheNameOfARevokedHoldAndNotTheReleasedOne(Fleet fleet) throws Exception {
    String a = "java/set-lock-delay-a";
    String b = "java/set-lock-delay-b";
    Duration delay = Duration.ofSeconds(30);
    try (TurnstileClient holder = fleet.client("holder").build(); TurnstileClient other = fleet.client("other").build()) {
      LockSet set = holder.acquireAll(Claim.names(a, b), AcquireOptions.lockDelay(delay).withOwner("h"));
      fleet.revoke(a, holder.sessionId(), "h");
      assertTrue(other.tryAcquire(a).isEmpty(), "a try-once of the revoked name during the set's delay finds it taken");
      long left = ProtoDuration.toNanos(fleet.describe(a).getDelayRemaining());
      assertTrue(left > 0 && left <= delay.toNanos(), "Describe shows the delay left: " + left + " ns");
      set.lock(b).release();
      try (Lock next = other.tryAcquire(b).orElseThrow()) {
        assertTrue(!fleet.describe(b).hasDelayRemaining(), "a released hold of the set delays nothing");
      }
      TurnstileException e = assertThrows(
          TurnstileException.class,
          () -> other.acquireAll(List.of(Claim.exclusive("java/set-lock-delay-c")), AcquireOptions.lockDelay(Duration.ofSeconds(61))));
      assertEquals(Reason.INVALID_ARGUMENT, e.reason());
      assertTrue(e.getMessage().contains("acquire_all.lock_delay"), e.getMessage());
    }
  }
}
