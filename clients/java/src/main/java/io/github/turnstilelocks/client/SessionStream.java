package io.github.turnstilelocks.client;

import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import turnstile.v1.LockServiceGrpc.LockServiceStub;
import turnstile.v1.Turnstile.Open;
import turnstile.v1.Turnstile.Opened;
import turnstile.v1.Turnstile.SessionRequest;
import turnstile.v1.Turnstile.SessionResponse;

/**
 * One Session stream of a session (a resume replaces it with another): sends {@code open} and
 * completes {@link #open} with {@code opened}, then hands every other message to {@code onMessage}
 * and its end (the error, or null when the server completed it) to {@code onEnd}.
 */
final class SessionStream {
  private final ClientCallStreamObserver<SessionRequest> requests;
  private final CompletableFuture<Opened> opened = new CompletableFuture<>();
  /** Completes when the stream is over, either way. */
  final CompletableFuture<Void> done = new CompletableFuture<>();
  /** nanoTime just before the {@code open} was written: what its renewal counts from. */
  volatile long openSentNanos;

  SessionStream(LockServiceStub stub, Consumer<SessionResponse> onMessage, BiConsumer<SessionStream, Throwable> onEnd) {
    requests = (ClientCallStreamObserver<SessionRequest>) stub.session(new StreamObserver<>() {
      @Override
      public void onNext(SessionResponse reply) {
        if (reply.hasOpened()) opened.complete(reply.getOpened());
        else onMessage.accept(reply);
      }

      @Override
      public void onError(Throwable error) {
        opened.completeExceptionally(error);
        done.complete(null);
        onEnd.accept(SessionStream.this, error);
      }

      @Override
      public void onCompleted() {
        opened.completeExceptionally(new IllegalStateException("session stream ended by the server before opened"));
        done.complete(null);
        onEnd.accept(SessionStream.this, null);
      }
    });
  }

  /**
   * Sends {@code open}; the future completes with {@code opened}, or with the error that ended the
   * stream first (a StatusRuntimeException), or TimeoutException after {@code timeout} (the stream
   * is then cancelled).
   */
  CompletableFuture<Opened> open(Open open, Duration timeout, ScheduledExecutorService timers) {
    openSentNanos = System.nanoTime();
    send(SessionRequest.newBuilder().setOpen(open).build());
    var timer = timers.schedule(() -> {
      if (opened.completeExceptionally(new TimeoutException("no opened within " + timeout.toMillis() + " ms"))) {
        cancel("open timed out");
      }
    }, timeout.toNanos(), TimeUnit.NANOSECONDS);
    opened.whenComplete((o, e) -> timer.cancel(false));
    return opened;
  }

  void send(SessionRequest request) {
    // StreamObserver is not thread-safe: one writer at a time.
    synchronized (requests) {
      try {
        requests.onNext(request);
      } catch (RuntimeException streamAlreadyOver) {
        // onError reports the end of the stream; a resume sends pending requests again.
      }
    }
  }

  void cancel(String why) {
    synchronized (requests) {
      requests.cancel(why, null);
    }
  }
}
