package io.github.turnstilelocks.client;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;

/**
 * What every session of one client shares: its coordinators, its timer thread (keepalives, lease
 * deadlines, backoff: short tasks only), its callback pool (user-visible completions, resumes) and
 * its settings.
 */
record ClientContext(
    Coordinators coordinators,
    ScheduledExecutorService timers,
    ExecutorService callbacks,
    Consumer<ClientEvent> events,
    String clientName,
    Duration ttl,
    Duration openTimeout) {

  /** Delivers {@code event} to the listener on the callback pool (never on a gRPC or timer thread). */
  void emit(ClientEvent event) {
    try {
      callbacks.execute(() -> events.accept(event));
    } catch (java.util.concurrent.RejectedExecutionException closing) {
      // The client is closing: nobody listens any more.
    }
  }
}
