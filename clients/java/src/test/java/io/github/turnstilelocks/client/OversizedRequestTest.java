package io.github.turnstilelocks.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.turnstilelocks.client.TurnstileException.Reason;
import io.github.turnstilelocks.client.harness.Fleet;
import io.github.turnstilelocks.client.harness.FleetExtension;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A request larger than a coordinator reads (its --max-message-bytes, the client's maxRequestBytes)
 * fails alone with INVALID_ARGUMENT and is never sent: before, gRPC failed the whole session stream
 * with RESOURCE_EXHAUSTED and every held lock was lost with it.
 */
@ExtendWith(FleetExtension.class)
class OversizedRequestTest {
  private static final String SUFFIX =
      "bytes, over the %d-byte maximum a coordinator reads (serve --max-message-bytes; client option maxRequestBytes); nothing was sent";

  @Test
  void anOversizedAcquireValueAndRequestReleaseFailInvalidArgumentAndTheHeldLockAndSessionLiveOn(Fleet fleet) throws Exception {
    List<ClientEvent> events = new CopyOnWriteArrayList<>();
    try (TurnstileClient c = fleet.client("oversized").onEvent(events::add).build()) {
      Lock held = c.acquire("java/oversized-held");
      String session = c.sessionId();

      CompletableFuture<Lock> big = c.acquireAsync("java/oversized", AcquireOptions.defaults().withValue(new byte[100_000]));
      ExecutionException failed = assertThrows(ExecutionException.class, () -> big.get(30, TimeUnit.SECONDS));
      TurnstileException acquire = assertInstanceOf(TurnstileException.class, failed.getCause());
      assertEquals(Reason.INVALID_ARGUMENT, acquire.reason(), "the oversized acquire: " + acquire.getMessage());
      assertTrue(acquire.getMessage().matches("acquire request: 1000\\d\\d " + String.format(SUFFIX, 65536).replace("(", "\\(").replace(")", "\\)")),
          acquire.getMessage());
      assertEquals(0, fleet.describe("java/oversized").getWaitersCount() + fleet.describe("java/oversized").getHoldersCount(),
          "nothing was sent for the oversized acquire");

      TurnstileException ask = assertThrows(TurnstileException.class, () -> c.requestRelease("java/oversized-held", "x".repeat(100_000)));
      assertEquals(Reason.INVALID_ARGUMENT, ask.reason(), "the oversized requestRelease: " + ask.getMessage());
      assertTrue(ask.getMessage().startsWith("request_release request: ") && ask.getMessage().endsWith(String.format(SUFFIX, 65536)),
          ask.getMessage());
      assertFalse(held.lost().isDone(), "the lock held before was not reported lost");

      // The session carries on: the next acquire is granted on it, and the lock held before is still its.
      try (Lock next = c.acquire("java/oversized-next")) {
        assertEquals(session, c.sessionId(), "the same session");
        assertEquals(session, fleet.describe("java/oversized-next").getHolders(0).getSessionId(), "granted on the same session");
      }
      assertTrue(held.isValid(), "the lock held before is still valid");
      assertFalse(held.lost().isDone(), "and was never reported lost");
      assertEquals(session, fleet.describe("java/oversized-held").getHolders(0).getSessionId(), "the coordinator still has the hold");
      assertTrue(events.stream().noneMatch(e -> e.kind() == ClientEvent.Kind.EXPIRED || e.kind() == ClientEvent.Kind.RECONNECTING),
          "no session loss: " + events);
      held.release();
    }
  }

  @Test
  void maxRequestBytesBoundsAcquireAllProclaimAndTransferAndMustBePositive(Fleet fleet) throws Exception {
    assertThrows(IllegalArgumentException.class, () -> fleet.client("bad").maxRequestBytes(0));
    assertThrows(IllegalArgumentException.class, () -> fleet.client("bad").maxRequestBytes(-1));
    try (TurnstileClient c = fleet.client("oversized-small").maxRequestBytes(1024).build()) {
      Leadership leading = c.election("java/oversized-election").campaign("v1", null);
      String session = c.sessionId();

      TurnstileException set = Futures.turnstileCause(assertThrows(ExecutionException.class, () ->
          c.acquireAllAsync(Claim.names("java/oversized-a", "java/oversized-b"), AcquireOptions.defaults().withValue(new byte[2000]))
              .get(30, TimeUnit.SECONDS)));
      assertEquals(Reason.INVALID_ARGUMENT, set.reason(), set.getMessage());
      assertTrue(set.getMessage().startsWith("acquire_all request: ") && set.getMessage().endsWith(String.format(SUFFIX, 1024)), set.getMessage());

      TurnstileException proclaim = assertThrows(TurnstileException.class, () -> leading.proclaim(new byte[2000]));
      assertEquals(Reason.INVALID_ARGUMENT, proclaim.reason(), proclaim.getMessage());
      assertTrue(proclaim.getMessage().startsWith("proclaim request: "), proclaim.getMessage());

      TurnstileException transfer = assertThrows(TurnstileException.class, () -> leading.lock().transfer("", "o".repeat(2000)));
      assertEquals(Reason.INVALID_ARGUMENT, transfer.reason(), transfer.getMessage());
      assertTrue(transfer.getMessage().startsWith("transfer request: "), transfer.getMessage());

      // Under the maximum, the same client's requests go through on the same session.
      try (Lock small = c.acquire("java/oversized-small", AcquireOptions.defaults().withValue(new byte[500]))) {
        assertEquals(session, fleet.describe("java/oversized-small").getHolders(0).getSessionId());
      }
      leading.proclaim("v2");
      assertTrue(leading.lock().isValid(), "the leadership is still held");
      assertEquals(0, fleet.describe("java/oversized-a").getWaitersCount(), "nothing was sent for the oversized set");
      leading.resign();
    }
  }
}
