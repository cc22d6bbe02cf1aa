package io.github.turnstilelocks.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.turnstilelocks.client.TurnstileException.Reason;
import io.github.turnstilelocks.client.harness.Fleet;
import io.github.turnstilelocks.client.harness.FleetExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Sets of locks taken all or nothing (acquireAll, withLocks) against a real coordinator and redis-server. */
@ExtendWith(FleetExtension.class)
class LockSetTest {
  private static final Duration LONG = Duration.ofSeconds(30);

  @Test
  void aSetIsGrantedTogetherWithOneTokenPerName(Fleet fleet) throws Exception {
    List<String> names = List.of("java/set/a", "java/set/b", "java/set/c");
    try (TurnstileClient client = fleet.client("set").build(); TurnstileClient other = fleet.client("other").build()) {
      LockSet set = client.acquireAll(names.toArray(String[]::new));
      assertEquals(names, List.copyOf(set.tokens().keySet()), "one token per name, in request order");
      for (int i = 0; i < names.size(); i++) {
        Lock lock = set.lock(names.get(i));
        assertEquals(lock, set.locks().get(i));
        assertEquals(lock.fencingToken(), set.tokens().get(names.get(i)));
        assertTrue(lock.isValid());
        assertEquals(client.sessionId(), fleet.describe(names.get(i)).getHolders(0).getSessionId());
        assertTrue(other.tryAcquire(names.get(i)).isEmpty(), names.get(i) + " is taken for another client");
      }
      assertThrows(IllegalArgumentException.class, () -> set.lock("java/set/none"));
      set.lock("java/set/a").release(); // one lock of the set, released alone
      assertEquals(0, fleet.describe("java/set/a").getHoldersCount());
      assertTrue(set.lock("java/set/b").isValid(), "the others stay held");
      set.close();
      for (String name : names) {
        Optional<Lock> next = other.tryAcquire(name);
        assertTrue(next.isPresent(), name + " is free after the set was released");
        assertTrue(next.get().fencingToken() > set.tokens().get(name), "the next token is greater");
      }
      assertFalse(set.lost().isDone(), "a released set is not reported lost");
    }
  }

  @Test
  void aWaitingSetHoldsNoneAndIsGrantedWhenItsLastBusyNameIsReleased(Fleet fleet) throws Exception {
    String x = "java/set-wait/x";
    String y = "java/set-wait/y";
    try (TurnstileClient holder = fleet.client("holder").build();
        TurnstileClient setClient = fleet.client("set").build();
        TurnstileClient other = fleet.client("other").build()) {
      Lock yHeld = holder.acquire(y);
      CompletableFuture<LockSet> waits = setClient.acquireAllAsync(Claim.names(x, y), AcquireOptions.defaults());
      fleet.awaitWaiters(x, 1);
      assertEquals(0, fleet.describe(x).getHoldersCount(), "a waiting set holds none of its names");
      Lock xHeld = other.tryAcquire(x).orElseThrow(() -> new AssertionError("x is free while the set waits"));
      yHeld.release();
      assertEquals(0, fleet.describe(y).getHoldersCount(), "y freed while x is busy: the set takes nothing");
      assertEquals(1, fleet.describe(y).getWaitersCount(), "the set still waits for y");
      assertFalse(waits.isDone(), "the set waits while x is held");
      xHeld.release();
      LockSet set = waits.get(30, TimeUnit.SECONDS);
      assertTrue(set.tokens().get(x) > xHeld.fencingToken() && set.tokens().get(y) > yHeld.fencingToken(), set.toString());
      set.release();
    }
  }

  @Test
  void tryingASetWithATakenNameFindsItBusyAndTakesNothing(Fleet fleet) throws Exception {
    String x = "java/set-try/x";
    String y = "java/set-try/y";
    try (TurnstileClient holder = fleet.client("holder").build(); TurnstileClient client = fleet.client("set").build()) {
      holder.acquire(y);
      assertTrue(client.tryAcquireAll(Claim.names(x, y), AcquireOptions.defaults()).isEmpty(), "busy: y is taken");
      TurnstileException e = assertThrows(TurnstileException.class,
          () -> client.acquireAll(Claim.names(x, y), AcquireOptions.waitAtMost(Duration.ZERO)));
      assertEquals(Reason.BUSY, e.reason());
      assertTrue(e.getMessage().contains(y), "names the taken lock: " + e.getMessage());
      assertEquals(0, fleet.describe(x).getHoldersCount() + fleet.describe(x).getWaitersCount(), "x untouched");
    }
  }

  @Test
  void aSetWhoseWaitRunsOutNamesTheBlockersOfEveryName(Fleet fleet) throws Exception {
    String x = "java/set-timeout/x";
    String y = "java/set-timeout/y";
    String z = "java/set-timeout/z";
    try (TurnstileClient holdsX = fleet.client("holds-x").build();
        TurnstileClient holdsY = fleet.client("holds-y").build();
        TurnstileClient client = fleet.client("set").build()) {
      holdsX.acquire(x, AcquireOptions.defaults().withOwner("ox"));
      holdsY.acquire(y, AcquireOptions.defaults().withOwner("oy"));
      TurnstileException e = assertThrows(TurnstileException.class,
          () -> client.acquireAll(Claim.names(x, y, z), AcquireOptions.waitAtMost(Duration.ofMillis(300))));
      assertEquals(Reason.TIMEOUT, e.reason(), e.getMessage());
      Map<String, String> ownerByName = e.blockedBy().stream()
          .collect(Collectors.toMap(TurnstileException.Blocker::name, TurnstileException.Blocker::owner));
      assertEquals(Map.of(x, "ox", y, "oy"), ownerByName, "one blocker per busy name");
      assertTrue(e.getMessage().contains("holds-x holding \"" + x + "\""), e.getMessage());
      for (String name : List.of(x, y, z)) assertEquals(0, fleet.describe(name).getWaitersCount(), name + ": withdrawn");
    }
  }

  @Test
  void cancellingAWaitingSetWithdrawsItFromEveryName(Fleet fleet) throws Exception {
    String x = "java/set-cancel/x";
    String y = "java/set-cancel/y";
    try (TurnstileClient holder = fleet.client("holder").build(); TurnstileClient client = fleet.client("set").build()) {
      Lock yHeld = holder.acquire(y);
      CompletableFuture<LockSet> waits = client.acquireAllAsync(Claim.names(x, y), AcquireOptions.waitAtMost(LONG));
      fleet.awaitWaiters(x, 1);
      fleet.awaitWaiters(y, 1);
      assertTrue(waits.cancel(true));
      fleet.awaitWaiters(x, 0);
      fleet.awaitWaiters(y, 0);
      yHeld.release();
      assertEquals(0, fleet.describe(x).getHoldersCount(), "the withdrawn set was not granted");
      assertEquals(0, fleet.describe(y).getHoldersCount(), "the withdrawn set was not granted");
    }
  }

  @Test
  void interruptingAWaitingSetWithdrawsItFromEveryName(Fleet fleet) throws Exception {
    String x = "java/set-interrupt/x";
    String y = "java/set-interrupt/y";
    try (TurnstileClient holder = fleet.client("holder").build(); TurnstileClient client = fleet.client("set").build()) {
      Lock xHeld = holder.acquire(x);
      CompletableFuture<Throwable> outcome = new CompletableFuture<>();
      Thread waiting = new Thread(() -> {
        try {
          client.acquireAll(Claim.names(x, y), AcquireOptions.defaults());
          outcome.complete(new AssertionError("acquired although interrupted"));
        } catch (Throwable t) {
          outcome.complete(t);
        }
      }, "test-set-waiter");
      waiting.start();
      fleet.awaitWaiters(y, 1);
      waiting.interrupt();
      assertTrue(outcome.get(30, TimeUnit.SECONDS) instanceof InterruptedException, String.valueOf(outcome.getNow(null)));
      fleet.awaitWaiters(x, 0);
      fleet.awaitWaiters(y, 0);
      xHeld.release();
    }
  }

  @Test
  void badSetsAreRefusedNamingTheField(Fleet fleet) throws Exception {
    List<String> seventeen = new ArrayList<>();
    for (int i = 0; i < 17; i++) seventeen.add("java/set-bad/" + i);
    Map<List<Claim>, String> cases = Map.of(
        List.of(), "acquire_all.locks: must not be empty",
        Claim.names("java/set-bad/a", "java/set-bad/b", "java/set-bad/a"), "acquire_all.locks[2].name",
        Claim.names(seventeen.toArray(String[]::new)), "acquire_all.locks: 17 locks exceeds the maximum of 16");
    try (TurnstileClient client = fleet.client("bad").build()) {
      for (Map.Entry<List<Claim>, String> c : cases.entrySet()) {
        TurnstileException e = assertThrows(TurnstileException.class, () -> client.acquireAll(c.getKey(), AcquireOptions.defaults()));
        assertEquals(Reason.INVALID_ARGUMENT, e.reason(), e.getMessage());
        assertTrue(e.getMessage().contains(c.getValue()), "names the field: " + e.getMessage());
      }
      int tokens = client.withLocks(Claim.names("java/set-bad/a", "java/set-bad/b"), AcquireOptions.defaults(),
          set -> set.tokens().size());
      assertEquals(2, tokens, "the session is untouched: a good set is granted");
    }
  }

  @Test
  void twoClientsTakingTheSameSetInOppositeOrdersBothComplete(Fleet fleet) throws Exception {
    String x = "java/set-orders/x";
    String y = "java/set-orders/y";
    try (TurnstileClient a = fleet.client("a").build(); TurnstileClient b = fleet.client("b").build()) {
      CompletableFuture<Integer> aRuns = CompletableFuture.supplyAsync(() -> rounds(a, x, y));
      CompletableFuture<Integer> bRuns = CompletableFuture.supplyAsync(() -> rounds(b, y, x));
      try {
        assertEquals(20, aRuns.get(60, TimeUnit.SECONDS));
        assertEquals(20, bRuns.get(60, TimeUnit.SECONDS));
      } catch (ExecutionException e) {
        throw new AssertionError("a client's rounds failed", e.getCause());
      }
    }
  }

  private static int rounds(TurnstileClient client, String... names) {
    int done = 0;
    for (int i = 0; i < 20; i++) {
      try {
        done += client.withLocks(Claim.names(names), AcquireOptions.waitAtMost(LONG), set -> set.tokens().size() == 2 ? 1 : 0);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }
    return done;
  }
}
