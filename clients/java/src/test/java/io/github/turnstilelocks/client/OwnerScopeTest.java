package io.github.turnstilelocks.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.turnstilelocks.client.harness.Fleet;
import io.github.turnstilelocks.client.harness.FleetExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Owners that follow the work (docs/deadlocks.md): an acquire on a thread inside a withLock body or an
 * {@link OwnerScope} takes that scope's owner when it names none. The naive two-account transfer,
 * written with no owner, is then one (session, owner) per client, and two crossed transfers get
 * exactly one DEADLOCK. The transfers run on two clients (two sessions, as two processes would be to
 * the coordinator) on two threads: Surefire has no second JVM with this classpath to run them in.
 */
@ExtendWith(FleetExtension.class)
class OwnerScopeTest {
  /** The naive transfer: from, then (inside its body) to; "transferred" or "failed REASON". */
  private static String naiveTransfer(TurnstileClient client, String from, String to, Duration wait,
      CountDownLatch holding, CountDownLatch go) throws Exception {
    return client.withLock(from, AcquireOptions.defaults(), first -> {
      holding.countDown();
      go.await();
      try {
        return client.withLock(to, AcquireOptions.waitAtMost(wait), second -> "transferred");
      } catch (TurnstileException e) {
        return "failed " + e.reason();
      }
    });
  }

  /** a → b and b → a on two clients, both holding their first account before either asks for the second; sorted outcomes. */
  private static List<String> crossedTransfers(Fleet fleet, String prefix, boolean follow, Duration wait) throws Exception {
    ExecutorService threads = Executors.newFixedThreadPool(2);
    try (TurnstileClient one = fleet.client("transfer-a").ownersFollowScope(follow).build();
        TurnstileClient two = fleet.client("transfer-b").ownersFollowScope(follow).build()) {
      CountDownLatch holding = new CountDownLatch(2);
      CountDownLatch go = new CountDownLatch(1);
      Future<String> ab = threads.submit(() -> naiveTransfer(one, prefix + "/a", prefix + "/b", wait, holding, go));
      Future<String> ba = threads.submit(() -> naiveTransfer(two, prefix + "/b", prefix + "/a", wait, holding, go));
      assertTrue(holding.await(20, TimeUnit.SECONDS), "both transfers hold their first account");
      go.countDown();
      List<String> outcomes = new ArrayList<>(List.of(ab.get(20, TimeUnit.SECONDS), ba.get(20, TimeUnit.SECONDS)));
      Collections.sort(outcomes);
      return outcomes;
    } finally {
      threads.shutdownNow();
    }
  }

  @Test
  void theNaiveTransferBothWaysRoundGetsExactlyOneDeadlock(Fleet fleet) throws Exception {
    assertEquals(List.of("failed DEADLOCK", "transferred"), crossedTransfers(fleet, "java/owner-scope", true, Duration.ofSeconds(10)));
  }

  @Test
  void optedOutTheSameTransfersSeeNoDeadlockAndTimeOut(Fleet fleet) throws Exception {
    assertEquals(List.of("failed TIMEOUT", "failed TIMEOUT"),
        crossedTransfers(fleet, "java/owner-opted-out", false, Duration.ofMillis(1500)));
  }

  @Test
  void reentryAndExplicitScopesFollowTheOwner(Fleet fleet) throws Exception {
    try (TurnstileClient client = fleet.client("owner-scope").build()) {
      client.withLock("java/owner-reenter", AcquireOptions.defaults(), outer -> {
        try (Lock inner = client.tryAcquire("java/owner-reenter").orElseThrow(() -> new AssertionError("nested try-once re-enters"))) {
          assertEquals(outer.owner(), inner.owner());
          assertEquals(outer.fencingToken(), inner.fencingToken());
        }
        return null;
      });
      try (OwnerScope job = client.ownerScope("job-42"); Lock x = client.acquire("java/owner-x"); Lock y = client.acquire("java/owner-y")) {
        assertEquals(List.of("job-42", "job-42"), List.of(x.owner(), y.owner()));
      }
      try (Lock free = client.acquire("java/owner-free"); Lock other = client.acquire("java/owner-other")) {
        assertNotEquals(free.owner(), other.owner(), "outside any scope each acquire has its own owner");
      }
    }
  }
}
