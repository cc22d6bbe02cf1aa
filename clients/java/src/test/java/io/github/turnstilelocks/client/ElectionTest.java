package io.github.turnstilelocks.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.turnstilelocks.client.Election.Leader;
import io.github.turnstilelocks.client.harness.Fleet;
import io.github.turnstilelocks.client.harness.FleetExtension;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Leader election: campaign, proclaim, observe, and hand-over to the next candidate on resign. */
@ExtendWith(FleetExtension.class)
class ElectionTest {
  @Test
  void leadershipPassesToTheWaitingCandidateOnResignAndObserversSeeEveryLeader(Fleet fleet) throws Exception {
    String name = "java/election";
    BlockingQueue<Optional<Leader>> seen = new LinkedBlockingQueue<>();
    try (TurnstileClient a = fleet.client("a").build(); TurnstileClient b = fleet.client("b").build();
        TurnstileClient watcher = fleet.client("watcher").build();
        AutoCloseable observing = watcher.election(name).observe(seen::add)) {
      assertEquals(Optional.empty(), seen.poll(30, TimeUnit.SECONDS), "first: nobody leads");
      Leadership first = a.election(name).campaign("a:7001", null);
      CompletableFuture<Leadership> second = new CompletableFuture<>();
      Thread candidate = new Thread(() -> {
        try {
          second.complete(b.election(name).campaign("b:7002", null));
        } catch (Throwable t) {
          second.completeExceptionally(t);
        }
      }, "test-candidate-b");
      candidate.start();
      fleet.awaitWaiters(name, 1);
      first.proclaim("a:7003");
      assertEquals("a:7003", watcher.election(name).leader().orElseThrow().valueText(), "leader() shows the proclaimed value");
      first.resign();
      Leadership next = second.get(30, TimeUnit.SECONDS);
      assertTrue(next.fencingToken() > first.fencingToken(), "the new leader's token is greater");
      assertTrue(next.isValid());

      List<String> leaders = new ArrayList<>();
      while (!leaders.contains("b:7002")) {
        Optional<Leader> leader = seen.poll(30, TimeUnit.SECONDS);
        assertNotNull(leader, "observer saw no leader change within 30 s; so far " + leaders);
        leader.ifPresent(l -> leaders.add(l.valueText()));
      }
      assertEquals(List.of("a:7001", "a:7003", "b:7002"), leaders, "every leader and value, in order");
      next.close();
      assertEquals(Optional.empty(), seen.poll(30, TimeUnit.SECONDS), "nobody leads after the last resign");
    }
  }
}
