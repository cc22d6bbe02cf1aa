package io.github.turnstilelocks.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.turnstilelocks.client.harness.CoordinatorProcess;
import io.github.turnstilelocks.client.harness.Fleet;
import io.github.turnstilelocks.client.harness.FleetExtension;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import turnstile.v1.Turnstile.DescribeResponse;

/**
 * A session survives its coordinator's drain (SIGTERM) or crash (SIGKILL): it resumes on the next
 * address with its locks and its place in a queue.
 */
@ExtendWith(FleetExtension.class)
class ResumeTest {
  /** How the first coordinator goes away. */
  private interface Fault {
    void inject(CoordinatorProcess coordinator) throws Exception;
  }

  @Test
  void resumesAfterADrainOnTheOtherCoordinatorKeepingItsLockAndItsPlaceInAQueue(Fleet fleet) throws Exception {
    resumeAfter(fleet, "drain", coordinator -> assertEquals(0, coordinator.drain(), "the drained coordinator exits 0"));
  }

  @Test
  void resumesAfterACrashOnTheOtherCoordinatorKeepingItsLockAndItsPlaceInAQueue(Fleet fleet) throws Exception {
    resumeAfter(fleet, "crash", CoordinatorProcess::crash);
  }

  private static void resumeAfter(Fleet fleet, String label, Fault fault) throws Exception {
    String held = "java/resume-" + label + "-held";
    String queued = "java/resume-" + label + "-queued";
    BlockingQueue<ClientEvent> events = new LinkedBlockingQueue<>();
    try (CoordinatorProcess drained = CoordinatorProcess.start(fleet.redisUrl());
        CoordinatorProcess survivor = CoordinatorProcess.start(fleet.redisUrl());
        TurnstileClient other = fleet.client("other").build();
        TurnstileClient client = TurnstileClient.builder(drained.address(), survivor.address()).clientName("resumer")
            .onEvent(events::add).build()) {
      Lock lock = client.acquire(held);
      String sessionId = client.sessionId();
      Lock blocker = other.acquire(queued);
      CompletableFuture<Lock> waiting = client.acquireAsync(queued, AcquireOptions.defaults());
      fleet.awaitWaiters(queued, 1);

      fault.inject(drained);
      ClientEvent resumed = next(events, ClientEvent.Kind.RESUMED);
      assertEquals(sessionId, resumed.sessionId(), "the same session went on");
      assertEquals(1, resumed.locks(), "with its lock");
      assertTrue(lock.isValid(), "the lock is still held");
      assertFalse(lock.lost().isDone(), "and was never reported lost");
      DescribeResponse described = fleet.describe(held);
      assertEquals(sessionId, described.getHolders(0).getSessionId());
      assertEquals(lock.fencingToken(), described.getHolders(0).getFencingToken(), "same fencing token");

      assertEquals(1, fleet.describe(queued).getWaitersCount(), "the pending acquire kept its place");
      blocker.release();
      Lock granted = waiting.get(30, TimeUnit.SECONDS);
      assertTrue(granted.fencingToken() > blocker.fencingToken());
      granted.release();
      lock.release();
      assertEquals(0, fleet.describe(held).getHoldersCount(), "released through the survivor");
    }
  }

  @Test
  void aWaitingSetIsSentAgainAfterADrainAndGrantedOnTheOtherCoordinator(Fleet fleet) throws Exception {
    String x = "java/resume-set/x";
    String y = "java/resume-set/y";
    BlockingQueue<ClientEvent> events = new LinkedBlockingQueue<>();
    try (CoordinatorProcess drained = CoordinatorProcess.start(fleet.redisUrl());
        CoordinatorProcess survivor = CoordinatorProcess.start(fleet.redisUrl());
        TurnstileClient other = fleet.client("other").build();
        TurnstileClient client = TurnstileClient.builder(drained.address(), survivor.address()).clientName("set-resumer")
            .onEvent(events::add).build()) {
      Lock blocker = other.acquire(y);
      CompletableFuture<LockSet> waiting = client.acquireAllAsync(Claim.names(x, y), AcquireOptions.waitAtMost(Duration.ofSeconds(30)));
      fleet.awaitWaiters(y, 1);
      String sessionId = client.sessionId();

      assertEquals(0, drained.drain(), "the drained coordinator exits 0");
      assertEquals(sessionId, next(events, ClientEvent.Kind.RESUMED).sessionId(), "the same session went on");
      fleet.awaitWaiters(y, 1); // sent again on the survivor with its request id
      assertEquals(0, fleet.describe(x).getHoldersCount(), "the set still holds none of its names");
      blocker.release();
      LockSet set = waiting.get(30, TimeUnit.SECONDS);
      assertTrue(set.tokens().get(y) > blocker.fencingToken());
      assertTrue(set.isValid());
      set.release();
      assertEquals(0, fleet.describe(x).getHoldersCount() + fleet.describe(y).getHoldersCount(), "released through the survivor");
    }
  }

  private static ClientEvent next(BlockingQueue<ClientEvent> events, ClientEvent.Kind kind) throws InterruptedException {
    while (true) {
      ClientEvent event = events.poll(30, TimeUnit.SECONDS);
      assertNotNull(event, "no " + kind + " event within 30 s");
      if (event.kind() == kind) return event;
      assertTrue(event.kind() == ClientEvent.Kind.CONNECTED || event.kind() == ClientEvent.Kind.RECONNECTING,
          "unexpected event before " + kind + ": " + event);
    }
  }
}
