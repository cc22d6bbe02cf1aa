package io.github.turnstilelocks.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.turnstilelocks.client.Election.Leader;
import io.github.turnstilelocks.client.TurnstileException.Reason;
import io.github.turnstilelocks.client.harness.Fleet;
import io.github.turnstilelocks.client.harness.FleetExtension;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The Java client's hand-over API (docs/elections.md): transfer, release requests, priority, the recipe. */
@ExtendWith(FleetExtension.class)
class HandOverTest {
  private static <T> CompletableFuture<T> inThread(String name, java.util.concurrent.Callable<T> body) {
    CompletableFuture<T> result = new CompletableFuture<>();
    Thread t = new Thread(() -> {
      try {
        result.complete(body.call());
      } catch (Throwable e) {
        result.completeExceptionally(e);
      }
    }, name);
    t.start();
    return result;
  }

  @Test
  void transferHandsTheLockToTheNamedWaiterWithAHigherToken(Fleet fleet) throws Exception {
    String name = "java/handover/transfer";
    try (TurnstileClient a = fleet.client("a").build(); TurnstileClient b = fleet.client("b").build()) {
      Lock held = a.acquire(name);
      CompletableFuture<Lock> waiting = inThread("waiter", () -> b.acquire(name, AcquireOptions.defaults().withOwner("next")));
      fleet.awaitWaiters(name, 1);
      Successor successor = held.transfer(b.sessionId(), "next");
      Lock next = waiting.get(30, TimeUnit.SECONDS);
      assertEquals(new Successor(b.sessionId(), "next", next.fencingToken()), successor);
      assertTrue(next.fencingToken() > held.fencingToken(), "the successor's token is greater");
      assertFalse(held.isValid(), "the old handle is released");
      assertFalse(held.lost().isDone(), "released, not lost");
      next.release();
    }
  }

  @Test
  void transferToASessionThatDoesNotWaitFailsNotFoundNamingWhoDoes(Fleet fleet) throws Exception {
    String name = "java/handover/not-found";
    try (TurnstileClient a = fleet.client("a").build(); TurnstileClient b = fleet.client("b").build()) {
      Lock held = a.acquire(name);
      inThread("waiter", () -> b.acquire(name, AcquireOptions.defaults().withOwner("w")));
      fleet.awaitWaiters(name, 1);
      TurnstileException e = assertThrows(TurnstileException.class, () -> held.transfer("0123456789abcdef0123456789abcdef", ""));
      assertEquals(Reason.NOT_FOUND, e.reason());
      assertTrue(e.getMessage().contains("owner \"w\""), e.getMessage());
      assertTrue(held.isValid(), "a refused transfer keeps the lock");
    }
  }

  @Test
  void aReleaseRequestReachesTheHoldersListener(Fleet fleet) throws Exception {
    String name = "java/handover/request";
    try (TurnstileClient a = fleet.client("a").build(); TurnstileClient b = fleet.client("b").build()) {
      Lock held = a.acquire(name, AcquireOptions.defaults().withOwner("h"));
      BlockingQueue<ReleaseRequest> requests = new LinkedBlockingQueue<>();
      held.onReleaseRequested(requests::add);
      assertEquals(1, b.requestRelease(name, "deploy"));
      ReleaseRequest got = requests.poll(30, TimeUnit.SECONDS);
      assertEquals(new ReleaseRequest(name, "h", "session " + b.sessionId(), "deploy", b.sessionId()), got);
      assertTrue(held.isValid(), "nothing is enforced");
      TurnstileException nobody = assertThrows(TurnstileException.class, () -> b.requestRelease(name + "/nobody", ""));
      assertEquals(Reason.NOT_FOUND, nobody.reason());
    }
  }

  @Test
  void theRecipeHandsLeadershipToTheAskingCandidateWithNoLeaderlessMoment(Fleet fleet) throws Exception {
    String name = "java/handover/recipe";
    BlockingQueue<Optional<Leader>> seen = new LinkedBlockingQueue<>();
    try (TurnstileClient old = fleet.client("old").build(); TurnstileClient oldPod = fleet.client("old-pod").build();
        TurnstileClient fresh = fleet.client("new").build(); TurnstileClient watcher = fleet.client("watcher").build();
        AutoCloseable observing = watcher.election(name).observe(seen::add)) {
      assertEquals(Optional.empty(), seen.poll(30, TimeUnit.SECONDS), "first: nobody leads");
      Leadership leading = old.election(name).campaign("old", null);
      assertEquals("old", seen.poll(30, TimeUnit.SECONDS).orElseThrow().valueText());
      BlockingQueue<ReleaseRequest> asked = new LinkedBlockingQueue<>();
      leading.onReleaseRequested(asked::add);
      inThread("old-pod", () -> oldPod.election(name).campaign("other", null));
      fleet.awaitWaiters(name, 1);
      AcquireOptions recipe = AcquireOptions.defaults().withPriority(10).withAskToYield("new version");
      CompletableFuture<Leadership> elected = inThread("new", () -> fresh.election(name).campaign("new".getBytes(), recipe));
      ReleaseRequest request = asked.poll(30, TimeUnit.SECONDS);
      assertNotNull(request, "the leader was asked to yield");
      assertEquals(fresh.sessionId(), request.sessionId());
      leading.handOver(request.sessionId());
      Leadership next = elected.get(30, TimeUnit.SECONDS);
      assertTrue(next.fencingToken() > leading.fencingToken());
      Optional<Leader> after = seen.poll(30, TimeUnit.SECONDS);
      assertNotNull(after, "the observer saw the change");
      assertEquals("new", after.orElseThrow().valueText(), "straight from old to new, no leaderless report");
      next.resign();
    }
  }
}
