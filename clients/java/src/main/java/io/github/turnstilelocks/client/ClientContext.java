package io.github.turnstilelocks.client;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;

/**
 * What every session of one client shares: its coordinators, its timer thread (keepalives, lease
 * deadlines, backoff: short tasks only), its callback pool (user-visible completions, resumes) and
 * its settings ({@code maxRequestBytes}: the largest encoded request a session sends, see
 * Session.oversized).
 */
record ClientContext(
    Coordinators coordinators,
    ScheduledExecutorService timers,
    ExecutorService callbacks,
    Consumer<ClientEvent> events,
    String clientName,
    Duration ttl,
    Duration openTimeout,
    int maxRequestBytes) {

  /** Delivers {@code event} to the listener on the callback pool (never on a gRPC or timer thread). */
  void emit(ClientEvent event) {
    runOnCallbacks(() -> events.accept(event), () -> {}); // closing: nobody listens any more
  }

  /** Runs {@code task} on the callback pool, or {@code ifClosed} when the client is closing. */
  void runOnCallbacks(Runnable task, Runnable ifClosed) {
    try {
      callbacks.execute(task);
    } catch (RejectedExecutionException closing) {
      ifClosed.run();
    }
  }

  /**
   * A future completed like {@code answered} but on the callback pool, so the caller's
   * continuations never run on a stream's gRPC callback (which a blocking one would stall);
   * completed inline once the client is closing.
   */
  <T> CompletableFuture<T> onCallbacks(CompletableFuture<T> answered) {
    CompletableFuture<T> out = new CompletableFuture<>();
    answered.whenComplete((value, error) -> {
      Runnable complete = () -> {
        if (error == null) out.complete(value);
        else out.completeExceptionally(error instanceof CompletionException c && c.getCause() != null ? c.getCause() : error);
      };
      runOnCallbacks(complete, complete);
    });
    return out;
  }
}
