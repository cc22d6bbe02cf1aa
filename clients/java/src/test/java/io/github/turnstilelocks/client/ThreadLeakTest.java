package io.github.turnstilelocks.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.turnstilelocks.client.harness.Fleet;
import io.github.turnstilelocks.client.harness.FleetExtension;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** No thread left behind: every thread a client started has ended once close() returned (joined, not slept on). */
@ExtendWith(FleetExtension.class)
class ThreadLeakTest {
  @Test
  void closeLeavesNoThreadBehind(Fleet fleet) throws Exception {
    Set<Thread> before = new HashSet<>(Thread.getAllStackTraces().keySet());
    int clientThreadsWhileOpen;
    List<Thread> whileOpen;
    try (TurnstileClient client = fleet.client("leak-check").build()) {
      try (Lock lock = client.acquire("java/leak")) {
        assertTrue(lock.isValid());
      }
      client.semaphore("java/leak-permits", 2).tryAcquire().orElseThrow().release();
      BlockingQueue<Optional<Election.Leader>> seen = new LinkedBlockingQueue<>();
      try (AutoCloseable observing = client.election("java/leak-election").observe(seen::add)) {
        seen.poll(30, TimeUnit.SECONDS);
      }
      // Left held on purpose: close() must release it and stop its lease timer.
      client.acquire("java/leak-left-held");
      whileOpen = newThreads(before);
      clientThreadsWhileOpen = (int) whileOpen.stream().filter(t -> t.getName().startsWith("turnstile-")).count();
    }
    // The threads seen while open, and any started during close().
    Set<Thread> startedSet = new HashSet<>(whileOpen);
    startedSet.addAll(newThreads(before));
    List<Thread> started = List.copyOf(startedSet);
    for (Thread t : started) t.join(TimeUnit.SECONDS.toMillis(10));
    List<String> alive = started.stream().filter(Thread::isAlive).map(Thread::getName).toList();
    List<String> others = started.stream().map(Thread::getName).filter(n -> !n.startsWith("turnstile-")).toList();
    System.out.printf("thread leak check: %d threads started while the client was open (%d named turnstile-, others %s), %d alive after close%n",
        started.size(), clientThreadsWhileOpen, others, alive.size());
    assertTrue(clientThreadsWhileOpen > 0, "the check sees the client's threads (named turnstile-...)");
    assertEquals(List.of(), alive, "threads the client started that outlived close()");
    assertEquals(0, fleet.describe("java/leak-left-held").getHoldersCount(), "close() released what was held");
  }

  private static List<Thread> newThreads(Set<Thread> before) {
    return Thread.getAllStackTraces().keySet().stream().filter(t -> !before.contains(t)).toList();
  }
}
