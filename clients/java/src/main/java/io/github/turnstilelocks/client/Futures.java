package io.github.turnstilelocks.client;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/** Waiting on the client's futures the blocking way: interruption cancels, failures unwrap. */
final class Futures {
  private Futures() {}

  /**
   * Waits for {@code future}; interrupted, cancels it (which withdraws an acquire) and rethrows.
   * A result that raced the cancel is handed to {@code abandon} (a lock: released again).
   */
  static <T> T await(CompletableFuture<T> future, java.util.function.Consumer<T> abandon) throws InterruptedException {
    try {
      return future.get();
    } catch (InterruptedException e) {
      if (!future.cancel(true) && !future.isCompletedExceptionally()) abandon.accept(future.getNow(null));
      throw e;
    } catch (ExecutionException e) {
      throw turnstileCause(e);
    }
  }

  /** The TurnstileException inside {@code e}, or one with reason INTERNAL wrapping what it is. */
  static TurnstileException turnstileCause(Throwable e) {
    Throwable cause = e;
    while ((cause instanceof ExecutionException || cause instanceof CompletionException) && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (cause instanceof TurnstileException t) return t;
    if (cause instanceof CancellationException) {
      return new TurnstileException(TurnstileException.Reason.CANCELLED, "cancelled", cause);
    }
    return new TurnstileException(TurnstileException.Reason.INTERNAL, "unexpected: " + cause, cause);
  }
}
