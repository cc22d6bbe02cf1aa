package io.github.turnstilelocks.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.turnstilelocks.client.harness.Fleet;
import io.github.turnstilelocks.client.harness.FleetExtension;
import io.github.turnstilelocks.client.harness.TcpProxy;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Told first: a holder whose session is frozen (its TCP connection passes no more bytes, so no
 * keepalive is acknowledged) judges its lock lost on its own clock before the coordinator can
 * grant it to the next client.
 */
@ExtendWith(FleetExtension.class)
class LeaseLossTest {
  @Test
  void aFrozenSessionLearnsItsLockIsLostBeforeTheNextWaiterIsGrantedIt(Fleet fleet) throws Exception {
    String name = "java/told-first";
    try (TcpProxy proxy = new TcpProxy(fleet.address());
        TurnstileClient frozen = TurnstileClient.builder(proxy.address()).clientName("frozen").ttl(Duration.ofSeconds(4)).build();
        TurnstileClient next = fleet.client("next").build()) {
      Lock lock = frozen.acquire(name);
      CompletableFuture<LossReason> lost = lock.lost();
      CompletableFuture<Lock> waiting = next.acquireAsync(name, AcquireOptions.defaults());
      fleet.awaitWaiters(name, 1);
      // Read on the grant's own callback, the instant the next client holds the lock.
      CompletableFuture<Boolean> frozenStillValidAtGrant = waiting.thenApply(granted -> lock.isValid());
      proxy.freeze();

      assertEquals(LossReason.LEASE_UNCONFIRMED, lost.get(60, TimeUnit.SECONDS), "the client's own clock ran out");
      long toldAt = System.nanoTime();
      Lock nextLock = waiting.get(60, TimeUnit.SECONDS);
      long grantedAt = System.nanoTime();
      assertFalse(frozenStillValidAtGrant.get(), "the frozen holder knew its lock was lost when the next one was granted");
      assertTrue(nextLock.fencingToken() > lock.fencingToken(), "the next holder's token is greater");
      assertFalse(lock.isValid());
      System.out.printf("told-first: frozen holder told %d ms before the next holder got the lock%n",
          TimeUnit.NANOSECONDS.toMillis(grantedAt - toldAt));
      nextLock.release();
      proxy.close(); // the frozen client's close() then finds its stream broken instead of waiting on it
    }
  }
}
